// Generic user-defined externs (P4_16 §7.2.12): an extern type with a type
// parameter, instantiated with two type arguments (one Rust trait each);
// a generic method and a generic function, each called with two types
// (one Rust method per list of type arguments, inferred or given), the
// function also from the parser; one copy passed to a generic control as a
// constructor parameter whose type names the control's type parameter
// (`Delay<T>(inout T v)(DelayLine<T> line)`). Their behaviour comes from
// `user_externs_generic.externs.rs`.
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header data_t {
    bit<8>  a;
    bit<32> b;
    bit<16> sum_header;
    bit<16> sum_b;
    bit<16> folded;
}

struct headers_t {
    ethernet_t ethernet;
    data_t     data;
}

struct meta_t { }

/// A delay line: `pop` returns what was pushed `depth` pushes ago (zero at first).
extern DelayLine<T> {
    DelayLine(bit<32> depth);
    void push(in T v);
    T pop();
}

/// Sums the bytes of its argument.
extern ByteSum {
    ByteSum();
    bit<16> of<D>(in D data);
}

/// Folds its argument into 16 bits.
extern bit<16> fold16<T>(in T data);

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ethernet);
        pkt.extract(hdr.data);
        hdr.data.folded = fold16<bit<8>>(hdr.data.a);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

/// Delays `v` through the line it is given.
control Delay<T>(inout T v)(DelayLine<T> line) {
    apply {
        line.push(v);
        v = line.pop();
    }
}

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    DelayLine<bit<8>>(2) delay8;
    Delay<bit<8>>(delay8) delay_a;
    DelayLine<bit<32>>(1) delay32;
    ByteSum() bytes;

    apply {
        delay_a.apply(hdr.data.a);
        delay32.push(hdr.data.b);
        hdr.data.b = delay32.pop();
        hdr.data.sum_header = bytes.of(hdr.ethernet);
        hdr.data.sum_b = bytes.of(hdr.data.b);
        hdr.data.folded = hdr.data.folded ^ fold16(hdr.data.b);
        sm.egress_spec = 1;
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.data);
    }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
