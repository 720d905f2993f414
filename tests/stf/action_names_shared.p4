// Actions that share a control-plane name (`@name`) are one P4Info action
// when their data parameters agree, as p4c merges them (p4c's
// named_meter_1-bmv2 names two actions `_nop`): each table still runs its
// own declaration. An unused action may reuse the name with other
// parameters: p4c drops unused actions before naming objects.
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header data_t {
    bit<8> k;
    bit<8> a;
    bit<8> b;
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
    @name("mark") action mark_unused(bit<16> other) { }
    @name("mark") action mark_a(bit<8> v) { hdr.data.a = v; }
    @name("mark") action mark_b(bit<8> v) { hdr.data.b = v; }

    table ta {
        key = { hdr.data.k : exact; }
        actions = { mark_a; NoAction; }
        default_action = NoAction();
    }
    table tb {
        key = { hdr.data.k : exact; }
        actions = { mark_b; NoAction; }
        default_action = NoAction();
    }

    apply {
        ta.apply();
        tb.apply();
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
