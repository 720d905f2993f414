// Varbit fields in structs (p4c's issue1291 sample has one in its
// metadata): a varbit value is copied from a header into a struct field,
// from there into another struct field and back into a second header, and
// compared with `==` (by length and bytes).
#include <core.p4>
#include <v1model.p4>

header opt_t {
    bit<8> len;
    varbit<64> data;
}

struct headers_t {
    opt_t a;
    opt_t b;
}

struct saved_t {
    bit<8> len;
    varbit<64> data;
}

struct meta_t {
    saved_t saved;
    varbit<64> copy;
}

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        bit<8> n = pkt.lookahead<bit<8>>();
        pkt.extract(hdr.a, (bit<32>)n * 8);
        meta.saved.len = hdr.a.len;
        meta.saved.data = hdr.a.data;
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply {
        meta.copy = meta.saved.data;
        hdr.b.setValid();
        hdr.b.len = meta.saved.len;
        hdr.b.data = meta.copy;
        if (meta.copy == hdr.a.data) {
            hdr.b.len = hdr.b.len + 0x80;
        }
        sm.egress_spec = 1;
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.a); pkt.emit(hdr.b); }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(),
         MyDeparser()) main;
