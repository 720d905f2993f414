// Serializable enums as header field types, select cases, comparisons and
// casts. An enum field keeps values that name no member.
#include <core.p4>
#include <v1model.p4>

enum bit<16> EtherType_t {
    IPV4 = 0x0800,
    ARP  = 0x0806,
    TAG  = 0x88b5
}

enum bit<8> Op_t {
    NOP = 0,
    SET = 1,
    INC = 2
}

header ethernet_t {
    bit<48>     dstAddr;
    bit<48>     srcAddr;
    EtherType_t etherType;
}

header data_t {
    Op_t   op;
    bit<8> val;
    bit<8> raw;
    bit<8> pad;
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
        transition select(hdr.ethernet.etherType) {
            EtherType_t.TAG: parse_data;
            default: accept;
        }
    }
    state parse_data {
        pkt.extract(hdr.data);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply {
        if (hdr.data.isValid()) {
            if (hdr.data.op == Op_t.SET) {
                hdr.data.val = 0x55;
            } else if (hdr.data.op == Op_t.INC) {
                hdr.data.val = hdr.data.val + 1;
                hdr.data.op = (Op_t)8w0;
            }
            hdr.data.raw = (bit<8>)hdr.data.op + 0x10;
            sm.egress_spec = 1;
        } else if (hdr.ethernet.etherType == EtherType_t.ARP) {
            hdr.ethernet.etherType = EtherType_t.IPV4;
            sm.egress_spec = 2;
        } else {
            mark_to_drop(sm);
        }
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
