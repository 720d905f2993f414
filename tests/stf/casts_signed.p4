// Casts between widths and signedness, sign extension, signed comparison
// and arithmetic shift, negation, and bool/bit<1> casts.
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header data_t {
    int<8> a;
    int<8> b;
    bit<16> wide;
    bit<8> lt;
    bit<8> sh;
    bit<8> neg;
    bit<8> trunc;
    bit<8> flag;
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
        int<16> w = (int<16>)hdr.data.a;
        hdr.data.wide = (bit<16>)w;
        hdr.data.lt = (hdr.data.a < hdr.data.b) ? 8w1 : 8w0;
        hdr.data.sh = (bit<8>)(hdr.data.a >> 2);
        hdr.data.neg = (bit<8>)(-hdr.data.a);
        hdr.data.trunc = (bit<8>)(bit<4>)(bit<8>)hdr.data.b;
        bool positive = hdr.data.b > 0;
        hdr.data.flag = (bit<8>)(bit<1>)positive;
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
