// Unsigned arithmetic on bit<8> wrapping at the width: shifts (also by a
// run-time amount at or beyond the width), division and modulo, bitwise
// not, negation, multiplication, widening before multiplying, comparisons.
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header data_t {
    bit<8>  a;
    bit<8>  b;
    bit<8>  shl;
    bit<8>  shr;
    bit<8>  div;
    bit<8>  mod;
    bit<8>  inv;
    bit<8>  min;
    bit<8>  neg;
    bit<8>  mul;
    bit<16> wide;
    bit<8>  cmp;
    bit<8>  big_shift;
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
        bit<8> a = hdr.data.a;
        bit<8> b = hdr.data.b;
        hdr.data.shl = a << 3;
        hdr.data.shr = a >> 3;
        hdr.data.div = a / 4;
        hdr.data.mod = a % 7;
        hdr.data.inv = ~a;
        hdr.data.min = (a < b) ? a : b;
        hdr.data.neg = -a;
        hdr.data.mul = a * b;
        hdr.data.wide = (bit<16>)a * (bit<16>)b;
        hdr.data.cmp = (bit<8>)((bit<1>)(a >= b)) + ((a != b) ? 8w2 : 8w0);
        hdr.data.big_shift = a << b;
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
