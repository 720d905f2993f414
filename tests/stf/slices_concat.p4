// Bit slices as l-values and r-values, and concatenation with ++.
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header data_t {
    bit<16> x;
    bit<8> y;
    bit<8> z;
    bit<32> w;
    bit<24> cat;
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
    apply {
        hdr.data.x[15:8] = hdr.data.y;
        hdr.data.x[3:0] = 4w0xf;
        hdr.data.w = hdr.data.y ++ hdr.data.z ++ hdr.data.x;
        hdr.data.cat = hdr.data.z ++ hdr.data.x[11:4] ++ 8w0x5a;
        hdr.data.z[7:7] = 1w1;
        hdr.data.y[0:0] = hdr.data.z[1:1];
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
