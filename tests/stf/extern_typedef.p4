// A typedef may name an extern type (P4_16 7.5.6), and a typedef may name
// another typedef: `Reg8` is a register of bytes and `Counts` another name
// for it. Instances of both are made through the aliases, one at top level
// and one in the control. Each packet adds `add` to the total at `idx`
// (reporting it before and after) and says how many packets came to `idx`
// before it.
#include <core.p4>
#include <v1model.p4>

typedef register<bit<8>> Reg8;
typedef Reg8 Counts;

header h_t {
    bit<8> idx;
    bit<8> add;
    bit<8> before;
    bit<8> after;
    bit<8> times;
}

struct headers_t { h_t h; }
struct meta_t { }

Reg8(16) totals;

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.h);
        transition accept;
    }
}

control VC(inout headers_t h, inout meta_t m) { apply { } }

control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    Counts(16) seen;
    apply {
        sm.egress_spec = 1;
        bit<8> t;
        totals.read(t, (bit<32>)h.h.idx);
        h.h.before = t;
        t = t + h.h.add;
        totals.write((bit<32>)h.h.idx, t);
        h.h.after = t;
        bit<8> n;
        seen.read(n, (bit<32>)h.h.idx);
        h.h.times = n;
        seen.write((bit<32>)h.h.idx, n + 1);
    }
}

control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }

control CC(inout headers_t h, inout meta_t m) { apply { } }

control D(packet_out pkt, in headers_t h) {
    apply { pkt.emit(h.h); }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
