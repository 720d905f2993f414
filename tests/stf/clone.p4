// Cloning: I2E clones (plain, and preserving a user-metadata field list)
// and an E2E clone made in egress. Egress stamps instance_type and
// egress_port into the packet. An I2E clone starts from the packet as it
// arrived (the ingress write of `mark` is not in it).
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header data_t {
    bit<8> kind;
    bit<8> itype;
    bit<8> eport;
    bit<8> mark;
}

struct headers_t {
    ethernet_t ethernet;
    data_t     data;
}

struct meta_t {
    @field_list(1)
    bit<8> tag;
}

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
    apply {
        sm.egress_spec = 2;
        hdr.data.mark = 0x11;
        if (hdr.data.kind == 1) {
            clone(CloneType.I2E, 32w5);
        } else if (hdr.data.kind == 3) {
            meta.tag = 0x70;
            clone_preserving_field_list(CloneType.I2E, 32w5, 1);
        }
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) {
    apply {
        hdr.data.itype = (bit<8>)sm.instance_type;
        hdr.data.eport = (bit<8>)sm.egress_port;
        if (sm.instance_type == 1) {
            hdr.data.mark = hdr.data.mark | meta.tag;
        }
        if (hdr.data.kind == 2 && sm.instance_type == 0) {
            clone(CloneType.E2E, 32w6);
        }
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
