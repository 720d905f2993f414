// Extracting into a member of a header-union stack's `next` element
// (P4_16 spec 8.18 and 8.20): `extract(opts.next.b)` fills member `b` of
// the element at `nextIndex` and then advances `nextIndex`, exactly as
// `extract(hs.next)` does for a stack of headers; `opts.last` is the
// element extracted last. Options are type-length-value-like: kind 1 is a
// byte option, kind 2 a 16-bit one, anything else ends the list. A fourth
// option does not fit the stack of three, so the parser stops with
// StackOutOfBounds and leaves that option in the payload.
#include <core.p4>
#include <v1model.p4>

header info_t {
    bit<8>  count;
    bit<8>  overflow;
    bit<16> sum;
}
header byte_opt_t { bit<8> kind; bit<8> v; }
header short_opt_t { bit<8> kind; bit<16> v; }
header_union opt_t {
    byte_opt_t  b;
    short_opt_t s;
}

struct headers_t {
    info_t   info;
    opt_t[3] opts;
}

struct meta_t { bit<16> sum; }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.info);
        m.sum = 0;
        transition options;
    }
    state options {
        transition select(pkt.lookahead<bit<8>>()) {
            1: byte_option;
            2: short_option;
            default: accept;
        }
    }
    state byte_option {
        pkt.extract(h.opts.next.b);
        m.sum = m.sum + (bit<16>) h.opts.last.b.v;
        transition options;
    }
    state short_option {
        pkt.extract(h.opts.next.s);
        m.sum = m.sum + h.opts.last.s.v;
        transition options;
    }
}

control VC(inout headers_t h, inout meta_t m) { apply { } }

control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        bit<8> n = 0;
        if (h.opts[0].isValid()) { n = n + 1; }
        if (h.opts[1].isValid()) { n = n + 1; }
        if (h.opts[2].isValid()) { n = n + 1; }
        h.info.count = n;
        h.info.overflow = sm.parser_error == error.StackOutOfBounds ? 8w1 : 8w0;
        h.info.sum = m.sum;
    }
}

control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }

control CC(inout headers_t h, inout meta_t m) { apply { } }

control D(packet_out pkt, in headers_t h) {
    apply {
        pkt.emit(h.info);
        pkt.emit(h.opts);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
