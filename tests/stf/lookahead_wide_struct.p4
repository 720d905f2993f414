// `lookahead<S>()` of a struct of scalars over 128 bits in all (P4_16
// §12.8.3): read member after member from a copy of the cursor, the packet
// not consumed; a packet shorter than S fails with PacketTooShort.
#include <core.p4>
#include <v1model.p4>

struct wide_t {
    bit<64> a;
    bit<64> b;
    bit<8>  c;
}

header res_t {
    bit<8> a_low;
    bit<8> b_high;
    bit<8> c;
}

header byte_t {
    bit<8> v;
}

struct headers_t {
    res_t  res;
    byte_t first;
}

struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        wide_t w = pkt.lookahead<wide_t>();
        hdr.res.setValid();
        hdr.res.a_low = w.a[7:0];
        hdr.res.b_high = w.b[63:56];
        hdr.res.c = w.c;
        pkt.extract(hdr.first);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.res);
        pkt.emit(hdr.first);
    }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(),
         MyDeparser()) main;
