// Extern constructors and extern functions overloaded by their parameter
// names (P4_16 §7.2.12.2, "Extern objects": functions and methods, and so
// constructors, the methods named like their extern, are told apart by
// their number of arguments, then by the names the call gives them, never
// by their types). An instantiation or call naming its arguments picks the
// declaration whose parameters have those names. Their behaviour comes from
// `extern_overloads.externs.rs`.
#include <core.p4>
#include <v1model.p4>

header data_t {
    bit<8> a;
    bit<8> b;
    bit<8> c;
    bit<8> d;
    bit<8> e;
    bit<8> f;
}

struct headers_t {
    data_t data;
}

struct meta_t { }

/// Multiplies by `factor`, or shifts left by `shift`, then adds `offset`.
extern Scaler {
    Scaler(bit<8> factor);
    Scaler(bit<8> shift);
    Scaler(bit<8> factor, bit<8> offset);
    bit<8> scale(in bit<8> x);
}

/// `a` XOR `with`, or `a` plus `add`; alone, `a` complemented.
extern bit<8> mix(in bit<8> a, in bit<8> with);
extern bit<8> mix(in bit<8> a, in bit<8> add);
extern bit<8> mix(in bit<8> a);

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.data);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    Scaler(factor = 3) times3;
    Scaler(shift = 2) shl2;
    Scaler(4, 1) times4_plus1;
    apply {
        hdr.data.a = times3.scale(hdr.data.a);
        hdr.data.b = shl2.scale(hdr.data.b);
        hdr.data.c = times4_plus1.scale(hdr.data.c);
        hdr.data.d = mix(a = hdr.data.d, with = 0x0f);
        hdr.data.e = mix(add = 2, a = hdr.data.e);
        hdr.data.f = mix(hdr.data.f);
        sm.egress_spec = 1;
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.data); }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
