// A control's type parameter as the type of its constructor parameter
// (P4_16 §14, `control Add<T>(inout T x)(T amount)`): each instance binds T
// from its type arguments, and the constant argument is checked as a T.
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header pair_t {
    bit<8>  small;
    bit<16> wide;
}

struct headers_t {
    ethernet_t ethernet;
    pair_t     p;
}

struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ethernet);
        pkt.extract(hdr.p);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

// Adds `amount`, of the same type as x.
control Add<T>(inout T x)(T amount) {
    apply {
        x = x + amount;
    }
}

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    Add<bit<8>>(8w3) add8;
    Add<bit<16>>(16w0x0100) add16;
    apply {
        add8.apply(hdr.p.small);
        add16.apply(hdr.p.wide);
        sm.egress_spec = 1;
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.p);
    }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
