// Default values of apply parameters (P4_16 §6.8.3): an `in` or
// directionless parameter of a control or parser may have a default value,
// which stands in for an argument an `apply` leaves out at the end, in an
// instance's `apply` and in a direct one (`C.apply(..)`) alike (p4c's
// issue1937-2-bmv2 and -3-bmv2).
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> b;
    bit<8> c;
    bit<8> d;
}

struct headers_t {
    h_t h;
}

struct meta_t { }

// Shifts v right by s, by 2 unless told otherwise.
control Shift(inout bit<8> v, in bit<8> s = 2) {
    apply {
        v = v >> s;
    }
}

// Sets the bits m in d, the top one unless told otherwise.
parser Mark(packet_in pkt, inout h_t h, in bit<8> m = 0x80) {
    state start {
        h.d = h.d | m;
        transition accept;
    }
}

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    Mark() mark;
    state start {
        pkt.extract(hdr.h);
        mark.apply(pkt, hdr.h);
        Mark.apply(pkt, hdr.h, 0x01);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    Shift() by_default;
    apply {
        sm.egress_spec = 1;
        by_default.apply(hdr.h.a);
        Shift.apply(hdr.h.b, 1);
        Shift.apply(hdr.h.c);
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.h);
    }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(),
         MyDeparser()) main;
