// A control may take the name of a v1model extern function (p4c keeps
// functions apart from parser and control types): the checksum controls
// here are called `verify_checksum` and `update_checksum` (the functions
// are then hidden; a sub-control does the checksum work).
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header data_t {
    bit<16> a;
    bit<16> sum;
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

control verify_checksum(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control Sum(inout headers_t hdr) {
    apply {
        update_checksum(true, { hdr.data.a }, hdr.data.sum, HashAlgorithm.csum16);
    }
}

control update_checksum(inout headers_t hdr, inout meta_t meta) {
    Sum() sum;
    apply {
        sum.apply(hdr);
    }
}

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.data);
    }
}

V1Switch(MyParser(), verify_checksum(), MyIngress(), MyEgress(), update_checksum(), MyDeparser()) main;
