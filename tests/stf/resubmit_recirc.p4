// Resubmit and recirculate with preserved field lists. op 1: ingress
// resubmits once; the resubmitted pass sees `counter` (in field list 1)
// but not `scratch`. op 2: egress recirculates until three passes were
// made; `counter` carries the pass count across recirculations.
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header data_t {
    bit<8> op;
    bit<8> passes;
    bit<8> rtype;
    bit<8> value;
}

struct headers_t {
    ethernet_t ethernet;
    data_t     data;
}

struct meta_t {
    @field_list(1)
    bit<8> counter;
    bit<8> scratch;
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
        sm.egress_spec = 1;
        if (hdr.data.op == 1) {
            if (sm.instance_type == 6) {
                hdr.data.rtype = 6;
                hdr.data.value = meta.counter;
                hdr.data.passes = meta.scratch;
            } else {
                meta.counter = 0x42;
                meta.scratch = 0x99;
                resubmit_preserving_field_list(1);
            }
        } else if (hdr.data.op == 2 && sm.instance_type == 4) {
            hdr.data.rtype = 4;
        }
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) {
    apply {
        if (hdr.data.op == 2) {
            hdr.data.passes = hdr.data.passes + 1;
            if (hdr.data.passes < 3) {
                meta.counter = hdr.data.passes << 4;
                recirculate_preserving_field_list(1);
            } else {
                hdr.data.value = meta.counter;
            }
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
