// A generic extern's type arguments inferred from its constructor's
// arguments (P4_16 §7.2.12: `Accum(16w100) a16;` is an `Accum<bit<16>>`),
// and typedefs of user extern types, generic (`Acc32`) and not (`Clock`,
// and `Ticks`, a typedef of that typedef). An inferred instance and one with
// its type argument written share a Rust trait when the types agree.
// Each packet adds `x`, `y` and `z` to running sums started at 100, 1 and 7
// (and `x` to one started at 0) and reads a counter that starts at 5 and
// one that starts at 200.
#include <core.p4>
#include <v1model.p4>

extern Accum<T> {
    Accum(T start);
    /// Adds `v` and returns the new sum.
    T add(in T v);
}

extern Stamp {
    Stamp(bit<8> first);
    /// The next number, counting up from `first`.
    bit<8> next();
}

typedef Accum<bit<32>> Acc32;
typedef Stamp Clock;
typedef Clock Ticks;

header h_t {
    bit<16> x;
    bit<8> y;
    bit<32> z;
    bit<16> s16;
    bit<8> s8;
    bit<32> s32;
    bit<16> plain;
    bit<8> tick;
    bit<8> tock;
}

struct headers_t { h_t h; }
struct meta_t { }

Acc32(32w7) a32;

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.h);
        transition accept;
    }
}

control VC(inout headers_t h, inout meta_t m) { apply { } }

control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    Accum(16w100) a16;
    Accum(8w1) a8;
    Accum<bit<16>>(16w0) plain;
    Clock(8w5) c;
    Ticks(8w200) t;
    apply {
        sm.egress_spec = 1;
        h.h.s16 = a16.add(h.h.x);
        h.h.s8 = a8.add(h.h.y);
        h.h.s32 = a32.add(h.h.z);
        h.h.plain = plain.add(h.h.x);
        h.h.tick = c.next();
        h.h.tock = t.next();
    }
}

control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.h); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
