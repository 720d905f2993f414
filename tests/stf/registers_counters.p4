// Per-port packet count kept in a register (read-modify-write) and echoed
// into the packet, plus an indirect packets-and-bytes counter per port that
// the test reads back with check_counter.
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header data_t {
    bit<32> count;
    bit<32> total;
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
    register<bit<32>>(8) pkt_count;
    register<bit<32>>(1) all_count;
    counter(8, CounterType.packets_and_bytes) port_counter;

    apply {
        bit<32> idx = (bit<32>)sm.ingress_port;
        bit<32> n;
        pkt_count.read(n, idx);
        n = n + 1;
        pkt_count.write(idx, n);
        bit<32> t;
        all_count.read(t, 0);
        all_count.write(0, t + 1);
        port_counter.count(idx);
        hdr.data.count = n;
        hdr.data.total = t + 1;
        sm.egress_spec = 4;
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
