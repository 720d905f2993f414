// Header equality (P4_16 spec 8.17): two headers are equal when both are
// invalid, or when both are valid and their fields are equal. An invalid
// header's fields play no part, even when they still hold what was parsed
// before `setInvalid`. Stacks (8.18), unions (8.20) and structs compare
// element by element, member by member and field by field, so the same
// holds inside them. Each comparison sets one bit of `r.bits`.
#include <core.p4>
#include <v1model.p4>

header pair_t {
    bit<8> a;
    bit<8> b;
}
header word_t { bit<16> w; }
header result_t { bit<8> bits; }

header_union either_t {
    pair_t p;
    word_t w;
}

struct holder_t {
    pair_t h;
    bit<8> tag;
}

struct headers_t {
    pair_t x;
    pair_t y;
    result_t r;
}

struct metadata_t {}

parser ParserImpl(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.x);
        pkt.extract(hdr.y);
        transition accept;
    }
}

control IngressImpl(inout headers_t hdr, inout metadata_t meta,
                    inout standard_metadata_t sm) {
    apply {
        hdr.r.setValid();
        hdr.r.bits = 0;

        // Copies of the parsed headers, made invalid: their stale fields
        // differ when x and y do, yet the headers are equal.
        pair_t gone_x = hdr.x;
        pair_t gone_y = hdr.y;
        gone_x.setInvalid();
        gone_y.setInvalid();
        if (gone_x == gone_y) { hdr.r.bits = hdr.r.bits | 0x01; }

        pair_t[2] sx;
        pair_t[2] sy;
        sx[0] = hdr.x;
        sy[0] = hdr.y;
        sx[0].setInvalid();
        sy[0].setInvalid();
        if (sx == sy) { hdr.r.bits = hdr.r.bits | 0x02; }

        either_t ux;
        either_t uy;
        ux.p = hdr.x;
        uy.p = hdr.y;
        ux.p.setInvalid();
        uy.p.setInvalid();
        if (ux == uy) { hdr.r.bits = hdr.r.bits | 0x04; }

        // Valid headers compare their fields.
        if (hdr.x != hdr.y) { hdr.r.bits = hdr.r.bits | 0x08; }

        // A valid header never equals an invalid one, even with the same
        // field values.
        if (hdr.x == gone_x) { hdr.r.bits = hdr.r.bits | 0x10; }

        holder_t hx = { gone_x, 7 };
        holder_t hy = { gone_y, 7 };
        if (hx == hy) { hdr.r.bits = hdr.r.bits | 0x20; }

        sm.egress_spec = 1;
    }
}

control EgressImpl(inout headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t sm) {
    apply { }
}

control VerifyImpl(inout headers_t hdr, inout metadata_t meta) { apply { } }

control ComputeImpl(inout headers_t hdr, inout metadata_t meta) { apply { } }

control DeparserImpl(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr); }
}

V1Switch(ParserImpl(), VerifyImpl(), IngressImpl(), EgressImpl(), ComputeImpl(),
         DeparserImpl()) main;
