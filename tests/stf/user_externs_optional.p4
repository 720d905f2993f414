// User-defined externs (P4_16 §7.2.12) with the parameter kinds of p4c's
// samples: `@optional` parameters a call leaves out (the call
// binds to a copy of the signature without them, named like an overload),
// a list argument `{a, b}` to a generic `in T` parameter (T is the list's
// tuple type, passed as a struct made up for it), and constructor
// arguments of enum and `error` type (passed as the codes the methods
// see). Their behaviour comes from `user_externs_optional.externs.rs`.
#include <core.p4>
#include <v1model.p4>

header data_t {
    bit<8>  a;
    bit<8>  b;
    bit<16> c;
    bit<8>  bumped;
    bit<8>  bumped3;
    bit<8>  twice;
    bit<8>  twice_plus;
    bit<16> sum3;
    bit<16> sum3_inv;
    bit<16> sum1;
    bit<32> codes;
}

struct headers_t {
    data_t data;
}

struct meta_t { }

enum Colour { Red, Green, Blue }

/// Adds to a byte; `by` is 1 when left out.
extern Bumper {
    Bumper(CounterType kind, Colour colour, error e);
    bit<8> bump(in bit<8> x, @optional in bit<8> by);
    /// The constructor's codes, one byte each.
    bit<32> codes();
}

/// Sums the bytes of its argument; `invert` flips the sum.
extern ByteAdder {
    ByteAdder();
    bit<16> sum<T>(in T data, @optional in bool invert);
}

/// Doubles `x`, adding `plus` when given.
extern bit<8> twice(in bit<8> x, @optional in bit<8> plus);

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
    Bumper(CounterType.bytes, Colour.Blue, error.PacketTooShort) bumper;
    ByteAdder() adder;

    apply {
        hdr.data.bumped = bumper.bump(hdr.data.a);
        hdr.data.bumped3 = bumper.bump(hdr.data.a, 3);
        hdr.data.twice = twice(hdr.data.b);
        hdr.data.twice_plus = twice(x = hdr.data.b, plus = 1);
        hdr.data.sum3 = adder.sum({ hdr.data.a, hdr.data.b, hdr.data.c });
        hdr.data.sum3_inv = adder.sum({ hdr.data.a, hdr.data.b, hdr.data.c }, true);
        hdr.data.sum1 = adder.sum({ hdr.data.c });
        hdr.data.codes = bumper.codes();
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
