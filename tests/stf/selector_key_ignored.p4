// A `selector` key in a table without an action_selector (p4c's issue1560
// sample): p4c accepts it and leaves the key out of the table, which then
// matches on its other keys alone (P4Info lists only those). Here `t`
// matches on `data.a`; `meta.hash` is a selector key that is ignored.
#include <core.p4>
#include <v1model.p4>

header data_t {
    bit<8> a;
    bit<8> b;
}

struct headers_t {
    data_t data;
}

struct meta_t {
    bit<16> hash;
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
    action set_b(bit<8> v) { hdr.data.b = v; }
    table t {
        key = {
            hdr.data.a : exact;
            meta.hash  : selector;
        }
        actions = { set_b; NoAction; }
        default_action = NoAction();
    }
    apply {
        meta.hash = (bit<16>)hdr.data.b;
        t.apply();
        sm.egress_spec = 1;
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
