// A learning bridge, the classic user of digests: a frame whose source MAC
// the `smac` table does not know is reported to the controller as a digest
// of (source MAC, ingress port); `dmac` forwards known destinations and
// everything else is flooded through multicast group 1.
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

struct headers_t {
    ethernet_t ethernet;
}

struct mac_learn_t {
    bit<48> src_addr;
    bit<9>  ingress_port;
}

struct meta_t { }

parser LearnParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                   inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control LearnVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control LearnIngress(inout headers_t hdr, inout meta_t meta,
                     inout standard_metadata_t sm) {
    action learn() {
        digest<mac_learn_t>(1, { hdr.ethernet.src_addr, sm.ingress_port });
    }
    action forward(bit<9> port) {
        sm.egress_spec = port;
    }
    action flood() {
        sm.mcast_grp = 1;
    }
    table smac {
        key = { hdr.ethernet.src_addr : exact @name("src_addr"); }
        actions = { learn; NoAction; }
        default_action = learn();
    }
    table dmac {
        key = { hdr.ethernet.dst_addr : exact @name("dst_addr"); }
        actions = { forward; flood; }
        default_action = flood();
    }
    apply {
        smac.apply();
        dmac.apply();
    }
}

control LearnEgress(inout headers_t hdr, inout meta_t meta,
                    inout standard_metadata_t sm) {
    apply {
        // Never send a flooded frame back where it came from.
        if (sm.egress_port == sm.ingress_port) {
            mark_to_drop(sm);
        }
    }
}

control LearnCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control LearnDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
    }
}

V1Switch(LearnParser(), LearnVerify(), LearnIngress(), LearnEgress(), LearnCompute(),
         LearnDeparser()) main;
