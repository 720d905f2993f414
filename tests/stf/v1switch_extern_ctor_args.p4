// Controls with extern constructor parameters instantiated in V1Switch(..)
// take top-level extern instances (P4_16 §15 parameterization, §7.2.12):
// `I(hits)` and `E(hits)` both reach the one register `hits`, which E also
// reads by its own name. I counts packets in cell 0 and writes the count to
// `a`; E writes what its parameter and the top-level name read, added, to
// `b`. One register object: the P4Info has one, `hits`.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> b;
}

struct headers_t {
    h_t h;
}

struct meta_t { }

register<bit<8>>(4) hits;

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.h);
        transition accept;
    }
}

control VC(inout headers_t h, inout meta_t m) { apply { } }

control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm)(register<bit<8>> r) {
    apply {
        sm.egress_spec = 1;
        bit<8> v;
        r.read(v, 0);
        v = v + 1;
        r.write(0, v);
        h.h.a = v;
    }
}

control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm)(register<bit<8>> seen) {
    apply {
        bit<8> by_param;
        bit<8> by_name;
        seen.read(by_param, 0);
        hits.read(by_name, 0);
        h.h.b = by_param + by_name;
    }
}

control CC(inout headers_t h, inout meta_t m) { apply { } }

control D(packet_out pkt, in headers_t h) {
    apply {
        pkt.emit(h.h);
    }
}

V1Switch(P(), VC(), I(hits), E(hits), CC(), D()) main;
