// A calculator protocol: the parser peeks at the next 24 bits with
// lookahead to recognise the header before extracting it; a table with
// const entries maps the operator character to an action, and the result
// is sent back out of the ingress port with the MACs swapped.
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header calc_t {
    bit<8>  p;
    bit<8>  four;
    bit<8>  ver;
    bit<8>  op;
    bit<32> a;
    bit<32> b;
    bit<32> res;
}

struct headers_t {
    ethernet_t ethernet;
    calc_t     calc;
}

struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            0x1234: check_calc;
            default: accept;
        }
    }
    state check_calc {
        transition select(pkt.lookahead<bit<24>>()) {
            0x503401: parse_calc;
            default: accept;
        }
    }
    state parse_calc {
        pkt.extract(hdr.calc);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    action send_back(bit<32> result) {
        bit<48> tmp = hdr.ethernet.dstAddr;
        hdr.ethernet.dstAddr = hdr.ethernet.srcAddr;
        hdr.ethernet.srcAddr = tmp;
        hdr.calc.res = result;
        sm.egress_spec = sm.ingress_port;
    }
    action op_add() { send_back(hdr.calc.a + hdr.calc.b); }
    action op_sub() { send_back(hdr.calc.a - hdr.calc.b); }
    action op_and() { send_back(hdr.calc.a & hdr.calc.b); }
    action op_or()  { send_back(hdr.calc.a | hdr.calc.b); }
    action op_xor() { send_back(hdr.calc.a ^ hdr.calc.b); }
    action drop() { mark_to_drop(sm); }

    table calculate {
        key = { hdr.calc.op : exact; }
        actions = { op_add; op_sub; op_and; op_or; op_xor; drop; }
        const default_action = drop();
        const entries = {
            0x2b : op_add();
            0x2d : op_sub();
            0x26 : op_and();
            0x7c : op_or();
            0x5e : op_xor();
        }
    }
    apply {
        if (hdr.calc.isValid()) {
            calculate.apply();
        } else {
            drop();
        }
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.calc);
    }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
