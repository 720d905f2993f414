// Casts of list expressions to list types (P4_16 §7.2.10, §8.12):
// `(list<T>){e0, e1, ..}` is a list of `T` values, each element checked
// (and an untyped integer sized) as a `T`. Here one is a hash's field list
// (identity: the fields concatenated) and one holds typed constants.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  a;
    bit<8>  b;
    bit<16> x;
    bit<16> y;
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
        sm.egress_spec = 1;
        hash(hdr.h.x, HashAlgorithm.identity, 16w0,
             (list<bit<8>>){ hdr.h.b, hdr.h.a }, 17w65536);
        hash(hdr.h.y, HashAlgorithm.identity, 16w0,
             (list<bit<4>>){ 1, 2, 0xf, hdr.h.a[3:0] }, 17w65536);
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.h); }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
