// At most one member of a header union is valid (P4_16 spec 8.20): making
// one member valid makes the others invalid, whether by `extract` (so a
// second extract into the same union replaces the first) or by assigning
// a valid header to it. Assigning an invalid header makes that member
// invalid and leaves the others as they were, and so does `setInvalid` on
// a member: it clears that member only. The first byte picks the case; the
// deparser emits it and then the union's valid member.
#include <core.p4>
#include <v1model.p4>

header case_t { bit<8> v; }
header a_t { bit<8> v; }
header b_t { bit<16> v; }
header_union u_t {
    a_t a;
    b_t b;
}

struct headers_t {
    case_t c;
    u_t    u;
}

struct meta_t { }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.c);
        transition select(h.c.v) {
            1: a_then_b;
            default: a_only;
        }
    }
    state a_then_b {
        pkt.extract(h.u.a);
        pkt.extract(h.u.b);
        transition accept;
    }
    state a_only {
        pkt.extract(h.u.a);
        transition accept;
    }
}

control VC(inout headers_t h, inout meta_t m) { apply { } }

control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        b_t valid_b;
        valid_b.setValid();
        valid_b.v = 0xBEEF;
        b_t invalid_b;
        if (h.c.v == 2) {
            h.u.b = valid_b;
        } else if (h.c.v == 3) {
            h.u.b = invalid_b;
        } else if (h.c.v == 4) {
            h.u.b.setInvalid();
        } else if (h.c.v == 5) {
            h.u.a.setInvalid();
        }
    }
}

control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }

control CC(inout headers_t h, inout meta_t m) { apply { } }

control D(packet_out pkt, in headers_t h) {
    apply {
        pkt.emit(h.c);
        pkt.emit(h.u);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
