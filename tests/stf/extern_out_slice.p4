// Slices as the `out` argument of v1model externs (P4_16 §8.6: a slice is an
// l-value): `register.read`, `hash` and `random` write only the bits the
// slice names, however deeply slices nest, and leave the others.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<16> x;
    bit<8>  v;
    bit<16> y;
    bit<16> z;
}

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
    register<bit<4>>(4) r;
    apply {
        r.write(0, hdr.h.v[3:0]);
        // x[11:8] takes v's low nibble.
        r.read(hdr.h.x[11:8], 0);
        // random between 9 and 9 is 9: x[3:0] = 9.
        random(hdr.h.x[3:0], 4w9, 4w9);
        bit<16> n = 0xffff;
        // Bits 5..2 of n's low byte: n's bits 5..2.
        r.read(n[7:0][5:2], 0);
        hdr.h.y = n;
        // identity of v, below 256: z[11:4] = v.
        hash(hdr.h.z[11:4], HashAlgorithm.identity, 8w0, { hdr.h.v }, 9w256);
        sm.egress_spec = 1;
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.h); }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
