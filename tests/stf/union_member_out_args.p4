// A header union member passed as an `out` or `inout` argument is written by
// the call's copy-out, an assignment (P4_16 §6.8): a member the callee leaves
// valid becomes the union's only valid member, one it leaves invalid only
// becomes invalid itself (§8.20). An `out` header starts invalid (§6.8), so a
// callee that does not make it valid invalidates the member it is passed.
// The first byte picks the case; the deparser emits it and then the union.
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

void make_b(out b_t b) {
    b.setValid();
    b.v = 0xBEEF;
}

void leave_b(out b_t b) { }

void leave_a(out a_t a) { }

parser ExtractB(packet_in pkt, out b_t b) {
    state start {
        pkt.extract(b);
        transition accept;
    }
}

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    ExtractB() extract_b;
    state start {
        pkt.extract(h.c);
        pkt.extract(h.u.a);
        transition select(h.c.v) {
            5: sub;
            default: accept;
        }
    }
    state sub {
        extract_b.apply(pkt, h.u.b);
        transition accept;
    }
}

control VC(inout headers_t h, inout meta_t m) { apply { } }

control SetB(inout b_t b) {
    apply {
        b.setValid();
        b.v = 0xF00D;
    }
}

control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    SetB() set_b_control;

    action set_b(inout b_t b) {
        b.setValid();
        b.v = 0xCAFE;
    }

    apply {
        sm.egress_spec = 1;
        if (h.c.v == 1) {
            make_b(h.u.b);
        } else if (h.c.v == 2) {
            leave_b(h.u.b);
        } else if (h.c.v == 3) {
            leave_a(h.u.a);
        } else if (h.c.v == 4) {
            set_b(h.u.b);
        } else if (h.c.v == 6) {
            set_b_control.apply(h.u.b);
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
