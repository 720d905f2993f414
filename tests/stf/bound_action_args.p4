// Actions with a directional (out) parameter bound in the table's action
// list: the same action writes a different field depending on the table
// (and on the default action's binding); a direct call binds it too.
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header data_t {
    bit<8> k;
    bit<8> b1;
    bit<8> b2;
    bit<8> b3;
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
    action setbyte(out bit<8> dst, bit<8> val) {
        dst = val;
    }
    table t1 {
        key = { hdr.data.k : exact; }
        actions = { setbyte(hdr.data.b1); NoAction; }
        default_action = NoAction();
    }
    table t2 {
        key = { hdr.data.k : exact; }
        actions = { setbyte(hdr.data.b2); NoAction; }
        default_action = setbyte(hdr.data.b2, 0xee);
    }
    apply {
        t1.apply();
        t2.apply();
        setbyte(hdr.data.b3, 0x33);
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
