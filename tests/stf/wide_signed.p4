// int<W> above 128 bits (P4_16 §8.7, §8.11.1): sign extension when an
// int<8> is cast to int<256>, arithmetic right shift of a negative
// int<256>, signed comparison, and a negative wide constant.
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header signed_t {
    int<8>   n;
    int<256> ext;
    int<256> s;
    int<256> sh;
    bit<8>   flags;
}

struct headers_t {
    ethernet_t ethernet;
    signed_t   sig;
}

struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ethernet);
        pkt.extract(hdr.sig);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply {
        hdr.sig.ext = (int<256>)hdr.sig.n;
        hdr.sig.sh = hdr.sig.s >> 250;
        bit<8> f = 0;
        if (hdr.sig.s < 0) { f = f | 1; }
        if (hdr.sig.ext == -2) { f = f | 2; }
        if (hdr.sig.sh > -33) { f = f | 4; }
        hdr.sig.flags = f;
        sm.egress_spec = 1;
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.sig);
    }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
