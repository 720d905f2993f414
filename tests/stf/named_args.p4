// Named arguments (P4_16 §6.8.2) in action, function, extern function,
// extern method and constructor calls and in table entries; default
// parameter values (§6.8.3).
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
    bit<8>  c;
    bit<8>  d;
    bit<16> h;
    bit<8>  r;
}

struct headers_t {
    ethernet_t ethernet;
    data_t     data;
}

struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr = hdr.ethernet);
        pkt.extract(hdr.data);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

bit<8> scale(in bit<8> v, in bit<8> by = 2) {
    return v * by;
}

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    register<bit<8>>(size = 4) regs;

    action set_both(bit<8> x, bit<8> y) {
        hdr.data.a = x;
        hdr.data.b = y;
    }

    table t {
        key = { hdr.data.a : exact; }
        actions = { set_both; NoAction; }
        const entries = {
            1 : set_both(y = 7, x = 9);
        }
        default_action = NoAction();
    }

    apply {
        set_both(y = hdr.data.a, x = hdr.data.b);
        hdr.data.c = scale(hdr.data.c);
        hdr.data.d = scale(by = 3, v = hdr.data.d);
        hash(result = hdr.data.h, algo = HashAlgorithm.identity, base = 16w0,
             data = { hdr.data.a }, max = 16w256);
        regs.write(index = 1, value = hdr.data.a);
        regs.read(index = 1, result = hdr.data.r);
        t.apply();
        sm.egress_spec = 1;
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr = hdr.data);
    }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
