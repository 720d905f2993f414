// User-defined externs (P4_16 §7.2.12): an extern object type with a
// constructor, overloaded methods, an `out` parameter and a return value,
// instantiated in a control and at top level; extern functions with a
// result and with an `inout` parameter. Their behaviour comes from
// `user_externs.externs.rs` (the README's "User-defined externs" example).
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header data_t {
    bit<8>  step;
    bit<32> total;
    bit<32> peeked;
    bit<16> mixed;
    bit<16> swapped;
    bit<32> global_total;
}

struct headers_t {
    ethernet_t ethernet;
    data_t     data;
}

struct meta_t {
    bit<32> seen;
}

/// A running sum that starts at its constructor argument.
extern Tally {
    Tally(bit<32> start);
    /// Adds `step` and returns the new sum.
    bit<32> add(in bit<8> step);
    /// Adds one.
    bit<32> add();
    /// The sum so far.
    void peek(out bit<32> sum);
}

/// `a` folded into 16 bits, xor `b`.
extern bit<16> mix16(in bit<32> a, in bit<16> b);
/// Swaps the two bytes of `v`.
extern void swap_bytes(inout bit<16> v);

Tally(32w1000) global_tally;

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ethernet);
        pkt.extract(hdr.data);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    Tally(100) tally;

    action count_it() {
        hdr.data.total = tally.add(hdr.data.step);
    }

    apply {
        count_it();
        tally.peek(meta.seen);
        hdr.data.peeked = meta.seen;
        hdr.data.mixed = mix16(hdr.ethernet.dstAddr[31:0], hdr.ethernet.etherType);
        swap_bytes(hdr.data.swapped);
        hdr.data.global_total = global_tally.add();
        sm.egress_spec = 1;
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) {
    apply {
        // The top-level instance is one object: egress adds to what
        // ingress counted.
        global_tally.add(8w10);
    }
}

control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.data);
    }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
