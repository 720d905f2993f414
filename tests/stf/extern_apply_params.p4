// Extern instances passed to sub-controls as directionless apply
// parameters (P4_16 §6.8: extern objects are passed as directionless
// parameters; p4c's issue1958 passes a register). The sub-control's calls
// reach the caller's instance: `Bump` reads and writes `MyIngress.seen`
// and counts in `MyIngress.hits`, both declared in MyIngress; `Chain`
// passes its own parameter on to `Bump`, and a top-level register is
// passed too; `CountAgain` takes the counter as a constructor parameter.
// No P4Info object is made for a parameter.
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header data_t {
    bit<8> slot;
    bit<8> before;
    bit<8> after;
    bit<8> global_after;
}

struct headers_t {
    ethernet_t ethernet;
    data_t     data;
}

struct meta_t { }

register<bit<8>>(4) global_seen;

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ethernet);
        pkt.extract(hdr.data);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

// Adds `step` to cell `slot` of `r`, reporting the value before and after,
// and counts the packet in cell `slot` of `c`.
control Bump(inout data_t d, register<bit<8>> r, in bit<8> step, counter c) {
    bit<8> v;
    action add() {
        r.read(v, (bit<32>)d.slot);
        d.before = v;
        v = v + step;
        r.write((bit<32>)d.slot, v);
        d.after = v;
    }
    apply {
        add();
        c.count((bit<32>)d.slot);
    }
}

// Passes the register it is given on to a Bump of its own.
control Chain(inout data_t d, register<bit<8>> r, counter c) {
    Bump() inner;
    apply {
        inner.apply(d, r, 8w10, c);
        d.global_after = d.after;
    }
}

// Counts in cell `slot` of the counter given to its constructor.
control CountAgain(in bit<8> slot)(counter c) {
    apply { c.count((bit<32>)slot); }
}

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    register<bit<8>>(4) seen;
    counter(4, CounterType.packets) hits;
    Bump() bump;
    Chain() chain;
    CountAgain(hits) again;
    apply {
        sm.egress_spec = 1;
        if (hdr.ethernet.etherType == 0x0001) {
            bump.apply(hdr.data, seen, 8w1, hits);
        } else {
            chain.apply(hdr.data, global_seen, hits);
            again.apply(hdr.data.slot);
        }
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
