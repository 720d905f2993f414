// The deprecated `mark_to_drop()` without an argument in top-level actions
// (p4c's v1model-p4runtime-most-types1 sample has `action my_drop() {
// mark_to_drop(); }`): it drops through the standard metadata of the
// control that runs the action, directly or through another top-level
// action, and later code may still override the egress port.
#include <core.p4>
#include <v1model.p4>

header data_t {
    bit<8> a;
    bit<8> b;
}

struct headers_t {
    data_t data;
}

struct meta_t { }

action my_drop() {
    mark_to_drop();
}

action drop_via_other() {
    my_drop();
}

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.data);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    table t {
        key = { hdr.data.a : exact; }
        actions = { my_drop; NoAction; }
        const default_action = NoAction();
        const entries = {
            0x01 : my_drop();
        }
    }
    apply {
        sm.egress_spec = 1;
        t.apply();
        if (hdr.data.a == 0x02) {
            drop_via_other();
            if (hdr.data.b == 0xff) {
                sm.egress_spec = 2;
            }
        }
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.data); }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(),
         MyDeparser()) main;
