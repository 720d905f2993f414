// L2 switch: known destination MACs are forwarded, unknown ones flooded
// through multicast group 1. Egress prunes the copy going back to the
// ingress port and stamps the replica id into the low 16 bits of the
// source MAC so the test can see which multicast node made each copy.
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

struct headers_t {
    ethernet_t ethernet;
}

struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    action forward(bit<9> port) {
        sm.egress_spec = port;
    }
    action flood() {
        sm.mcast_grp = 1;
    }
    table dmac {
        key = { hdr.ethernet.dstAddr : exact; }
        actions = { forward; flood; }
        default_action = flood();
        size = 64;
    }
    apply {
        dmac.apply();
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) {
    apply {
        if (sm.instance_type == 5) {
            if (sm.egress_port == sm.ingress_port) {
                mark_to_drop(sm);
            } else {
                hdr.ethernet.srcAddr[15:0] = sm.egress_rid;
            }
        }
    }
}

control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
    }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
