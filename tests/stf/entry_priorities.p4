// Entry priorities (P4_16 v1.2.4 §14.2.1.4.1): `largest_priority_wins =
// false` makes the smaller priority win; entries without a priority follow
// the previous one, `priority_delta` weaker.
// (`entries`, not `const entries`: p4c refuses priorities in `const entries`.)
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header data_t {
    bit<8> k1;
    bit<8> k2;
    bit<8> r1;
    bit<8> r2;
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
    action r1(bit<8> v) { hdr.data.r1 = v; }
    action r2(bit<8> v) { hdr.data.r2 = v; }

    table smallest_wins {
        key = { hdr.data.k1 : ternary; }
        actions = { r1; NoAction; }
        largest_priority_wins = false;
        priority_delta = 10;
        entries = {
            priority = 20: 0x10 &&& 0xf0 : r1(1);
            priority = 10: 0x11 &&& 0xff : r1(2);
            priority = 20: 0x20 &&& 0xf0 : r1(3);
            0x21 &&& 0xff : r1(4);  // 30: loses to the entry before
        }
        default_action = NoAction();
    }

    table largest_wins {
        key = { hdr.data.k2 : ternary; }
        actions = { r2; NoAction; }
        priority_delta = 5;
        entries = {
            priority = 100: 0x40 &&& 0xf0 : r2(5);
            0x31 &&& 0xff : r2(6);  // 95
            priority = 97: 0x31 &&& 0xf1 : r2(7);
        }
        default_action = NoAction();
    }

    apply {
        smallest_wins.apply();
        largest_wins.apply();
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
