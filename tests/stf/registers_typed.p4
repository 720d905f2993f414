// Registers whose cells are int<W>, bool and a serializable enum (v1model
// `register<T>`): reads give back the written value with its type, so a
// signed accumulator compares as signed.
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header data_t {
    bit<8> op;
    bit<8> idx;
    bit<8> a;
    bit<8> b;
}

struct headers_t {
    ethernet_t ethernet;
    data_t     data;
}

struct meta_t { }

enum bit<8> Color { Red = 1, Green = 2 }

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
    register<int<8>>(4) acc;
    register<bool>(4) seen;
    register<Color>(4) last;

    apply {
        bit<32> i = (bit<32>)hdr.data.idx;
        int<8> cur;
        acc.read(cur, i);
        cur = cur + (int<8>)hdr.data.a;
        acc.write(i, cur);
        hdr.data.a = (bit<8>)cur;

        bool s;
        seen.read(s, i);
        hdr.data.b = s ? 8w1 : 8w0;
        seen.write(i, true);
        if (cur < 0) {
            hdr.data.b = hdr.data.b | 0x80;
        }

        Color c;
        last.read(c, i);
        last.write(i, (Color)hdr.data.op);
        hdr.data.op = (bit<8>)c;
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
