// Digests of bit strings (v1model `digest<T>(receiver, data)` with T a
// bit<W>): p4c names the digest after the type argument when it names a
// `typedef`, else `digest_N` for the N-th such call, and P4Info describes
// the data as a bitstring, not a struct.
#include <core.p4>
#include <v1model.p4>

typedef bit<16> value_t;

header data_t {
    bit<8>  kind;
    bit<16> value;
}

struct headers_t {
    data_t d;
}

struct meta_t {}

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.d);
        transition accept;
    }
}

control MyIngress(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (h.d.kind == 1) {
            // digest_0: the value widened to 32 bits.
            digest<bit<32>>(1, (bit<32>)h.d.value + 1);
        } else if (h.d.kind == 2) {
            // value_t: named after the typedef.
            digest<value_t>(1, h.d.value);
        } else if (h.d.kind == 3) {
            // digest_1: the type (bit<8>) is inferred.
            digest(1, h.d.kind);
        }
    }
}

control MyEgress(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply {} }
control Vrfy(inout headers_t h, inout meta_t m) { apply {} }
control Upd(inout headers_t h, inout meta_t m) { apply {} }
control Dep(packet_out pkt, in headers_t h) { apply { pkt.emit(h); } }

V1Switch(P(), Vrfy(), MyIngress(), MyEgress(), Upd(), Dep()) main;
