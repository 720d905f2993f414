// Header stack initialisers (P4_16 §8.18): a list expression of as many
// headers as the stack holds, each element an initialiser of the header
// type (`{1, 2}`, `(H){#}` for an invalid one), cast to the stack type or
// taking it from the context, for plain and generic headers. An assigned
// initialiser replaces the elements and leaves `nextIndex` alone, as p4c
// lowers it (one assignment per element): the second `extract(s.next)`
// below still fills `s[1]`. A constant of a stack type is read by a
// constant index, and its `isValid`, `size` and `lastIndex` work.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> b;
}

header G<T> {
    bit<8> b;
    T      t;
}

header r_t {
    bit<8> x;
    bit<8> y;
    bit<8> z;
    bit<8> w;
}

struct headers_t {
    h_t[2] s;
    r_t    r;
}

struct meta_t { }

const h_t[2] PAIRS = { {8w0x30, 8w0x31}, (h_t){#} };

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.s.next);
        hdr.s = (h_t[2]){ {8w0xa0, 8w0xa1}, (h_t){#} };
        pkt.extract(hdr.s.next);
        pkt.extract(hdr.r);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        bit<8> w_in = hdr.r.w;
        G<bit<8>>[3] g = (G<bit<8>>[3]){ {1, 2}, {3, 4}, (G<bit<8>>){#} };
        h_t[2] loc = { {5, 6}, {7, 8} };
        hdr.r.x = g[0].b + g[1].t;
        hdr.r.y = g[2].isValid() ? 8w1 : 8w0;
        if (g == (G<bit<8>>[3]){ {1, 2}, {3, 4}, (G<bit<8>>){#} }) {
            hdr.r.z = 0x11;
        }
        if (hdr.r.w == 1) {
            loc = { {9, 10}, (h_t){#} };
        }
        hdr.r.w = loc[0].a + (loc[1].isValid() ? loc[1].a : 8w0x40);
        if (w_in == 2 && PAIRS[0].isValid() && !PAIRS[1].isValid() && PAIRS.size == 2) {
            hdr.r.w = PAIRS[0].b + (bit<8>)PAIRS.lastIndex;
        }
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.s);
        pkt.emit(hdr.r);
    }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
