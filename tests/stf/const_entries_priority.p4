// entries with explicit priorities (P4_16 1.2.4 `priority =`): a larger
// priority wins regardless of source order. They are `entries`, not
// `const entries`: p4c refuses priorities in `const entries`.
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header data_t {
    bit<8> a;
    bit<8> r;
    bit<8> pad1;
    bit<8> pad2;
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
    action set_r(bit<8> v) {
        hdr.data.r = v;
    }
    table t {
        key = { hdr.data.a : ternary; }
        actions = { set_r; }
        const default_action = set_r(0xff);
        entries = {
            priority = 10 : 0x10 &&& 0xf0 : set_r(1);
            priority = 30 : 0x12 &&& 0xff : set_r(2);
            priority = 20 : 0x00 &&& 0x01 : set_r(3);
        }
    }
    apply {
        t.apply();
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
