// A stack of header unions (P4_16 spec 8.20: "header unions ... may be
// stacked"): two tag bytes say what follows each, 1 a byte option and 2 a
// short one, 0 nothing. Ingress adds one to each byte option and turns a
// short second option into the byte 0xEE (setValid on one member of a
// union invalidates the others); the deparser emits the tag stack and
// then the union stack, whose elements each put out their valid member
// and nothing when none is.
#include <core.p4>
#include <v1model.p4>

header tag_t { bit<8> kind; }
header byte_t { bit<8> v; }
header short_t { bit<16> v; }
header_union opt_t {
    byte_t  b;
    short_t s;
}

struct headers_t {
    tag_t[2] tags;
    opt_t[2] opts;
}

struct meta_t { }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.tags.next);
        pkt.extract(h.tags.next);
        transition select(h.tags[0].kind) {
            1: first_byte;
            2: first_short;
            default: second;
        }
    }
    state first_byte {
        pkt.extract(h.opts[0].b);
        transition second;
    }
    state first_short {
        pkt.extract(h.opts[0].s);
        transition second;
    }
    state second {
        transition select(h.tags[1].kind) {
            1: second_byte;
            2: second_short;
            default: accept;
        }
    }
    state second_byte {
        pkt.extract(h.opts[1].b);
        transition accept;
    }
    state second_short {
        pkt.extract(h.opts[1].s);
        transition accept;
    }
}

control VC(inout headers_t h, inout meta_t m) { apply { } }

control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (h.opts[0].b.isValid()) {
            h.opts[0].b.v = h.opts[0].b.v + 1;
        }
        if (h.opts[1].b.isValid()) {
            h.opts[1].b.v = h.opts[1].b.v + 1;
        }
        if (h.opts[1].s.isValid()) {
            h.opts[1].b.setValid();
            h.opts[1].b.v = 0xEE;
            h.tags[1].kind = 1;
        }
    }
}

control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }

control CC(inout headers_t h, inout meta_t m) { apply { } }

control D(packet_out pkt, in headers_t h) {
    apply {
        pkt.emit(h.tags);
        pkt.emit(h.opts);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
