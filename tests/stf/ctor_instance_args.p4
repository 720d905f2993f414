// Control-typed constructor parameters (P4_16 §10.3.1, p4c's issue1566
// sample): one instance passed to two controls is one object. `shared`
// counts its applications in a register; `first` and `second` each apply
// it through their constructor parameter, so the count goes up by two a
// packet. (Two copies would give 1, 1 on the first packet.)
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header data_t {
    bit<8> a;
    bit<8> b;
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

control step_t(inout bit<8> x);

// Sets x to the number of times it has been applied.
control Count(inout bit<8> x) {
    register<bit<8>>(1) calls;
    apply {
        bit<8> n;
        calls.read(n, 0);
        n = n + 1;
        calls.write(0, n);
        x = n;
    }
}

control Via(inout bit<8> x)(step_t s) {
    apply {
        s.apply(x);
    }
}

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    Count() shared;
    Via(shared) first;
    Via(shared) second;
    apply {
        first.apply(hdr.data.a);
        second.apply(hdr.data.b);
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
