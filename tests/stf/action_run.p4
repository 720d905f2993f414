// Branching on table results: switch on action_run (with a default
// branch), and the hit and miss properties of apply().
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header data_t {
    bit<8> a;
    bit<8> r1;
    bit<8> r2;
    bit<8> r3;
}

struct headers_t {
    ethernet_t ethernet;
    data_t     data;
}

struct meta_t { }

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
    action set_x() { }
    action set_y() { }
    action mark(bit<8> v) { hdr.data.r2 = v; }
    table t1 {
        key = { hdr.data.a : exact; }
        actions = { set_x; set_y; NoAction; }
        default_action = NoAction();
    }
    table t2 {
        key = { hdr.data.a : exact; }
        actions = { mark; }
        default_action = mark(0x0e);
    }
    table t3 {
        key = { hdr.data.a : exact; }
        actions = { NoAction; }
        default_action = NoAction();
    }
    apply {
        switch (t1.apply().action_run) {
            set_x: { hdr.data.r1 = 1; }
            set_y: { hdr.data.r1 = 2; }
            default: { hdr.data.r1 = 3; }
        }
        if (t2.apply().hit) {
            hdr.data.r2 = hdr.data.r2 | 0x10;
        } else {
            hdr.data.r2 = hdr.data.r2 | 0x20;
        }
        if (t3.apply().miss) {
            hdr.data.r3 = 0xaa;
        } else {
            hdr.data.r3 = 0xbb;
        }
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
