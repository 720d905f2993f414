/* Block features: a control with constructor parameters instantiated twice
 * (each instance gets its own counter, named by instance path), a
 * sub-control with in/inout parameters, generic structs, tuples, a value
 * set over a key tuple, a serializable enum matched with integer literals,
 * and @name/@id annotations. */
#include <core.p4>
#include <v1model.p4>

enum bit<16> EtherType { IPV4 = 0x0800, TEST = 0x88b5 }

header ethernet_t { bit<48> dst; bit<48> src; EtherType etherType; }
header tag_t { bit<8> kind; bit<8> sub; bit<8> out1; bit<8> out2; }

struct pair<T> { T first; T second; }
struct headers { ethernet_t eth; tag_t tag; }
struct meta_t { pair<bit<8>> pr; }

parser P(packet_in pkt, out headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    value_set<tuple<bit<8>, bit<8>>>(4) special;
    state start {
        pkt.extract(hdr.eth);
        transition select(hdr.eth.etherType) {
            0x88b5: parse_tag;
            default: accept;
        }
    }
    state parse_tag {
        pkt.extract(hdr.tag);
        transition select(hdr.tag.kind, hdr.tag.sub) {
            special: mark;
            default: accept;
        }
    }
    state mark {
        hdr.tag.out2 = 0x55;
        transition accept;
    }
}

control VC(inout headers hdr, inout meta_t meta) { apply { } }

/* Counts packets per kind; the array size comes from the constructor. */
control Counting(in bit<8> kind)(bit<32> size) {
    counter(size, CounterType.packets) c;
    apply { c.count((bit<32>) kind); }
}

control Add(in bit<8> x, inout bit<8> acc) {
    apply { acc = acc + x; }
}

control I(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    Counting(32w8) small;
    Counting(32w256) big;
    Add() add;

    @name(".set_out") @id(0x0100abcd)
    action set_out(bit<9> port) { sm.egress_spec = port; }

    @name("renamed")
    table by_kind {
        key = { hdr.tag.kind: exact @name("kind"); }
        actions = { set_out; }
        default_action = set_out(1);
    }

    apply {
        if (!hdr.tag.isValid()) {
            sm.egress_spec = 2;
            exit;
        }
        small.apply(hdr.tag.kind);
        big.apply(hdr.tag.kind);
        meta.pr = { hdr.tag.kind, hdr.tag.sub };
        tuple<bit<8>, bit<8>> t = { meta.pr.first, meta.pr.second };
        add.apply(meta.pr.second, meta.pr.first);
        hdr.tag.out1 = meta.pr.first;
        by_kind.apply();
    }
}

control E(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.eth); pkt.emit(hdr.tag); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
