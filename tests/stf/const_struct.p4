// Constants of struct, header and tuple types (P4_16 §8.17: a struct-valued
// expression whose fields are compile-time known is a compile-time constant),
// declared at the top level and in a control, read field by field.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  a;
    bit<16> b;
    bit<8>  c;
}

struct pair_t {
    bit<8>  a;
    bit<16> b;
}

struct outer_t {
    pair_t p;
    bool   on;
}

const pair_t PAIR = { a = 8w0x11, b = 16w0x2233 };
const outer_t OUTER = { p = { 8w0x44, 16w0x5566 }, on = true };
const tuple<bit<8>, bit<8>> TWO = { 8w0x77, 8w0x88 };

struct headers_t {
    h_t h;
}

struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    const h_t LOCAL = { a = 8w0x99, b = 16w0xaabb, c = 8w0xcc };
    apply {
        sm.egress_spec = 1;
        if (hdr.h.a == 0) {
            hdr.h.a = PAIR.a;
            hdr.h.b = PAIR.b;
            hdr.h.c = TWO[1];
        } else if (hdr.h.a == 1 && OUTER.on) {
            hdr.h.a = OUTER.p.a;
            hdr.h.b = OUTER.p.b;
            hdr.h.c = TWO[0];
        } else {
            hdr.h.a = LOCAL.a;
            hdr.h.b = LOCAL.b;
            hdr.h.c = LOCAL.c;
        }
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.h); }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
