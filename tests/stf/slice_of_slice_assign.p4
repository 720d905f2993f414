// Assigning to a slice of a slice (P4_16 bit slices): `x[11:4][5:2] = v` writes
// bits 9..6 of `x` and leaves the others, however deeply the slices nest.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<16> x;
    bit<8>  v;
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
    apply {
        hdr.h.x[11:4][5:2] = hdr.h.v[3:0];
        bit<8> n = 0xff;
        // Bits 7..1, of those 5..2 (bits 6..3), of those 3..1: bits 6..4.
        n[7:1][5:2][3:1] = 3w0;
        hdr.h.v = n;
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
