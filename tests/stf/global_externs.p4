// Extern instances declared at top level (P4_16 §11.3): one register and
// one counter shared by ingress and egress, named without a control prefix.
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header data_t {
    bit<32> ingress_seen;
    bit<32> egress_seen;
}

struct headers_t {
    ethernet_t ethernet;
    data_t     data;
}

struct meta_t { }

register<bit<32>>(4) packets_seen;
counter(4, CounterType.packets) hits;

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
        bit<32> n;
        packets_seen.read(n, 0);
        packets_seen.write(0, n + 1);
        hdr.data.ingress_seen = n;
        hits.count(1);
        sm.egress_spec = 1;
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) {
    apply {
        bit<32> n;
        packets_seen.read(n, 0);
        hdr.data.egress_seen = n;
        hits.count(1);
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
