// `list<T>` locals and constants (P4_16 §7.2.10): a list's length is its
// initialiser's, each element a T (an untyped integer takes T's width), and
// lists of lists hold lists of their own lengths. Here they are copied, read
// by constant index (into a `hash` field list too; identity: the fields
// concatenated) and compared with a list expression.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  a;
    bit<8>  b;
    bit<16> x;
    bit<8>  y;
    bit<8>  z;
}

struct headers_t {
    h_t h;
}

struct meta_t { }

const list<bit<8>> STEPS = { 1, 2, 3 };
const list<list<bit<4>>> NIBBLES = { { 1, 2 }, { 3, 4, 5 } };

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
    apply {
        sm.egress_spec = 1;
        list<bit<8>> l = { hdr.h.b, hdr.h.a };
        list<bit<8>> copy = l;
        hash(hdr.h.x, HashAlgorithm.identity, 16w0, { copy[0], copy[1] }, 17w65536);
        // 3 + 1 = 4
        hdr.h.y = STEPS[2] + STEPS[0];
        // 5 ++ 2
        hdr.h.z = NIBBLES[1][2] ++ NIBBLES[0][1];
        if (l == { 8w0x3c, 8w0xa5 }) {
            hdr.h.y = 0xee;
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
