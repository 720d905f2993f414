// Extern instances passed to parsers as directionless parameters (P4_16
// §6.8: an extern object is passed as a directionless parameter; §15:
// constructor parameters). Each sub-parser's calls reach the caller's
// instance:
// - `Count` takes a register and a counter as apply parameters, bound by
//   `cnt.apply(pkt, hdr.data, seen, hits)` to MyParser's own `seen` and
//   `hits`;
// - `Mark` takes a register as a constructor parameter, `Mark(seen) mark;`;
// - MyParser itself takes the top-level `global_seen` as a constructor
//   parameter in `V1Switch(MyParser(global_seen), ..)`, passes it to
//   `Chain`'s apply parameter, and Chain passes its parameter on to the
//   constructor of its own `Bump`.
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
}

struct headers_t {
    ethernet_t ethernet;
    data_t     data;
}

struct meta_t { }

register<bit<8>>(4) global_seen;

// Extracts `d`, adds 1 to cell `d.slot` of `r` (reporting the value before
// and after) and counts the packet in cell `d.slot` of `c`.
parser Count(packet_in pkt, out data_t d, register<bit<8>> r, counter c) {
    bit<8> v;
    state start {
        pkt.extract(d);
        r.read(v, (bit<32>)d.slot);
        d.before = v;
        v = v + 1;
        r.write((bit<32>)d.slot, v);
        d.after = v;
        c.count((bit<32>)d.slot);
        transition accept;
    }
}

// As Count, adding 100, on the register given to its constructor.
parser Mark(packet_in pkt, out data_t d)(register<bit<8>> r) {
    bit<8> v;
    state start {
        pkt.extract(d);
        r.read(v, (bit<32>)d.slot);
        d.before = v;
        v = v + 100;
        r.write((bit<32>)d.slot, v);
        d.after = v;
        transition accept;
    }
}

// As Count, adding 10, on the register given to its constructor.
parser Bump(packet_in pkt, out data_t d)(register<bit<8>> r) {
    bit<8> v;
    state start {
        pkt.extract(d);
        r.read(v, (bit<32>)d.slot);
        d.before = v;
        v = v + 10;
        r.write((bit<32>)d.slot, v);
        d.after = v;
        transition accept;
    }
}

// Passes the register it is given on to a Bump of its own.
parser Chain(packet_in pkt, out data_t d, register<bit<8>> r) {
    Bump(r) inner;
    state start {
        inner.apply(pkt, d);
        transition accept;
    }
}

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm)(register<bit<8>> g) {
    register<bit<8>>(4) seen;
    counter(4, CounterType.packets) hits;
    Count() cnt;
    Chain() chain;
    Mark(seen) mark;
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            0x0001: one;
            0x0002: two;
            0x0003: three;
            default: accept;
        }
    }
    state one {
        cnt.apply(pkt, hdr.data, seen, hits);
        transition accept;
    }
    state two {
        chain.apply(pkt, hdr.data, g);
        transition accept;
    }
    state three {
        mark.apply(pkt, hdr.data);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply { sm.egress_spec = 1; }
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

V1Switch(MyParser(global_seen), MyVerify(), MyIngress(), MyEgress(), MyCompute(),
         MyDeparser()) main;
