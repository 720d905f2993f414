// v1model.p4 version 20200408 and later (picked before the include; the
// default is 20180101, as in p4c) names the port type `PortId_t`; programs
// use it for action parameters and locals.
#include <core.p4>
#define V1MODEL_VERSION 20200408
#include <v1model.p4>

header h_t {
    bit<8> port;
}

struct headers_t {
    h_t h;
}

struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    action send(PortId_t p) { sm.egress_spec = p; }
    table route {
        key = { hdr.h.port : exact; }
        actions = { send; }
        const entries = {
            1 : send(3);
        }
        default_action = send(2);
    }
    apply {
        route.apply();
        PortId_t chosen = sm.egress_spec;
        hdr.h.port = (bit<8>)chosen;
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.h); }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
