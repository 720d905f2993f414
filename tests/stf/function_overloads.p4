// Functions overloaded by their number of parameters and by their parameter
// names (P4_16 §7.2.12, "Extern objects": functions and methods are the only
// constructs that overload; a call is resolved by the number of its
// arguments, then by the names it gives them, never by their types).
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> b;
    bit<8> c;
    bit<8> d;
    bit<8> e;
}

struct headers_t { h_t h; }
struct meta_t { }

// By arity.
bit<8> mix(in bit<8> x) { return x + 1; }
bit<8> mix(in bit<8> x, in bit<8> y) { return x ^ y; }
bit<8> mix(in bit<8> x, in bit<8> y, in bit<8> z) { return x + y + z; }

// One arity, told apart by a parameter's name: only named calls choose.
bit<8> scale(in bit<8> v, in bit<8> times) { return v * times; }
bit<8> scale(in bit<8> v, in bit<8> shift) { return v << shift; }

// A generic function beside a plain one of another arity.
T same<T>(in T v) { return v; }
bit<8> same(in bit<8> v, in bit<8> less) { return v - less; }

// Void overloads called as statements.
void bump(inout bit<8> x) { x = x + 1; }
void bump(inout bit<8> x, in bit<8> by) { x = x + by; }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply {
        hdr.h.a = mix(hdr.h.a);
        hdr.h.b = mix(hdr.h.b, 0x0f);
        hdr.h.c = mix(z = 1, y = 2, x = hdr.h.c);
        hdr.h.d = scale(v = hdr.h.d, times = 3) + scale(shift = 4, v = 1);
        hdr.h.e = same(hdr.h.e) + same(hdr.h.e, 1);
        bump(hdr.h.a);
        bump(hdr.h.b, 2);
        sm.egress_spec = 1;
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.h); }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
