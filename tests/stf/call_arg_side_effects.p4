// Arguments are evaluated left to right, `out`/`inout` ones copied in
// where they stand and copied out in order after the call (P4_16 §6.8,
// §8.1). An `in` argument that calls something runs between the copy-ins
// around it: `pair(inc(h.h.f), h.h.f)` copies `f` in after `inc` changed
// it, and `add_to(h.h.c, inc(h.h.c))` copies `c` in before. The second was
// generated Rust that did not build (the action borrows the headers, the
// argument wrote into them).
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> b;
    bit<8> c;
    bit<8> d;
    bit<8> f;
}

struct headers_t {
    h_t h;
}

struct meta_t { }

bit<8> inc(inout bit<8> x) {
    x = x + 1;
    return x;
}

void pair(in bit<8> a, inout bit<8> b) {
    b = b + a;
}

void both(inout bit<8> x, inout bit<8> y) {
    x = 1;
    y = 2;
}

parser ParserImpl(packet_in packet, out headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.h);
        transition accept;
    }
}

control ingress(inout headers_t hdr, inout meta_t meta,
                inout standard_metadata_t standard_metadata) {
    action add_to(inout bit<8> v, in bit<8> w) {
        v = v + w;
    }

    apply {
        standard_metadata.egress_spec = 1;
        hdr.h.b = inc(hdr.h.a) + inc(hdr.h.a) * 2;
        add_to(hdr.h.c, inc(hdr.h.c));
        both(hdr.h.d, hdr.h.d);
        pair(inc(hdr.h.f), hdr.h.f);
    }
}

control egress(inout headers_t hdr, inout meta_t meta,
               inout standard_metadata_t standard_metadata) {
    apply { }
}

control DeparserImpl(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.h);
    }
}

control verifyChecksum(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control computeChecksum(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

V1Switch(ParserImpl(), verifyChecksum(), ingress(), egress(), computeChecksum(),
         DeparserImpl()) main;
