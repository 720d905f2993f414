// Header assignment (copies validity too), a struct built from a list
// expression, setInvalid (the header is not emitted, its bytes are gone),
// return from an apply block, and exit in egress.
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
    data_t     d1;
    data_t     d2;
}

struct pair_t {
    bit<8> x;
    bit<8> y;
}

struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ethernet);
        pkt.extract(hdr.d1);
        pkt.extract(hdr.d2);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (hdr.d1.a == 0xff) {
            return;
        }
        hdr.d2 = hdr.d1;
        pair_t p = { hdr.d1.a, hdr.d1.b };
        p.x = p.x + 1;
        hdr.d1.a = p.x;
        hdr.d1.b = p.y;
        if (hdr.d1.b == 0) {
            hdr.d2.setInvalid();
        }
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) {
    apply {
        if (hdr.d1.a == 0x10) {
            exit;
        }
        hdr.ethernet.etherType = 0x1234;
    }
}

control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.d1);
        pkt.emit(hdr.d2);
    }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
