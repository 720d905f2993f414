// The hash algorithms of v1model over one field list, each result written
// into the packet; random() with equal bounds.
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header data_t {
    bit<16> a;
    bit<16> b;
    bit<32> c;
    bit<16> crc16;
    bit<32> crc32;
    bit<32> ident;
    bit<16> csum;
    bit<16> xor;
    bit<16> ranged;
    bit<8> rnd;
    bit<8> pad;
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
        hash(hdr.data.crc16, HashAlgorithm.crc16, 16w0,
             { hdr.data.a, hdr.data.b, hdr.data.c }, 32w65536);
        hash(hdr.data.crc32, HashAlgorithm.crc32, 32w0,
             { hdr.data.a, hdr.data.b, hdr.data.c }, 32w0xffffffff);
        hash(hdr.data.ident, HashAlgorithm.identity, 32w0,
             { hdr.data.a, hdr.data.b }, 32w0xffffffff);
        hash(hdr.data.csum, HashAlgorithm.csum16, 16w0,
             { hdr.data.a, hdr.data.b, hdr.data.c }, 32w65536);
        hash(hdr.data.xor, HashAlgorithm.xor16, 16w0,
             { hdr.data.a, hdr.data.b, hdr.data.c }, 32w65536);
        hash(hdr.data.ranged, HashAlgorithm.crc16, 16w100,
             { hdr.data.a, hdr.data.b, hdr.data.c }, 32w1000);
        random(hdr.data.rnd, 8w7, 8w7);
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
