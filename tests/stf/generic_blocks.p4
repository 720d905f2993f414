// Generic parsers and controls (P4_16 §7.2.12, §12, §13): instantiated with
// explicit type arguments (`Pull<tag_t>() t;`, `Bump<bit<16>>(5) b16;`) and
// in `V1Switch` without any, where each type argument is inferred from the
// position (headers H, metadata M) as p4c infers the package's type
// parameters. Each distinct list of type and constructor arguments is
// checked (and generated) once.
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header tag_t {
    bit<8> kind;
    bit<8> val;
}

header wide_t {
    bit<16> w;
}

struct headers_t {
    ethernet_t ethernet;
    tag_t      t;
    wide_t     w;
}

struct meta_t { }

parser Pull<H>(packet_in pkt, out H h) {
    state start {
        pkt.extract(h);
        transition accept;
    }
}

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    Pull<ethernet_t>() eth;
    Pull<tag_t>() tag;
    Pull<wide_t>() wide;
    state start {
        eth.apply(pkt, hdr.ethernet);
        tag.apply(pkt, hdr.t);
        wide.apply(pkt, hdr.w);
        transition accept;
    }
}

control MyVerify<H, M>(inout H hdr, inout M meta) { apply { } }

// Adds `step` (widened to T) to x.
control Bump<T>(inout T x)(bit<8> step) {
    apply {
        x = x + (T)step;
    }
}

control MyIngress<H, M>(inout H hdr, inout M meta, inout standard_metadata_t sm) {
    Bump<bit<8>>(1) b8;
    Bump<bit<8>>(1) again;
    Bump<bit<16>>(5) b16;
    apply {
        b8.apply(hdr.t.val);
        again.apply(hdr.t.val);
        b16.apply(hdr.w.w);
        sm.egress_spec = 1;
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser<H>(packet_out pkt, in H hdr) {
    apply {
        pkt.emit(hdr);
    }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
