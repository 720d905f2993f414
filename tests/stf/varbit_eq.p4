// `==` and `!=` on varbit values (P4_16 §8.9.1): equal when both have the
// same current width and the same bits.
#include <core.p4>
#include <v1model.p4>

header opt_t {
    bit<8>     len;
    varbit<32> data;
}

header res_t {
    bit<8> eq;
    bit<8> ne;
}

struct headers_t {
    opt_t a;
    opt_t b;
    res_t res;
}

struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.a, (bit<32>)pkt.lookahead<bit<8>>() * 8);
        pkt.extract(hdr.b, (bit<32>)pkt.lookahead<bit<8>>() * 8);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply {
        hdr.res.setValid();
        hdr.res.eq = hdr.a.data == hdr.b.data ? 8w1 : 8w0;
        hdr.res.ne = hdr.a.data != hdr.b.data ? 8w1 : 8w0;
        sm.egress_spec = 1;
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.a);
        pkt.emit(hdr.b);
        pkt.emit(hdr.res);
    }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
