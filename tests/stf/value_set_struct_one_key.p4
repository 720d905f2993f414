// A parser value set of a struct with one field, matched against one select
// key (P4_16 "Parser Value Sets": the fields line up with the keys). As value_set:
// tagged EtherTypes, set by the control plane, go to port 2.
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header tag_t {
    bit<16> value;
}

struct headers_t {
    ethernet_t ethernet;
    tag_t      tag;
}

struct meta_t { }

struct tag_type_t {
    bit<16> ether_type;
}

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    value_set<tag_type_t>(4) tag_types;

    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            tag_types: parse_tag;
            default: accept;
        }
    }
    state parse_tag {
        pkt.extract(hdr.tag);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply {
        if (hdr.tag.isValid()) {
            hdr.tag.value = hdr.tag.value + 1;
            sm.egress_spec = 2;
        } else {
            sm.egress_spec = 1;
        }
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.tag);
    }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
