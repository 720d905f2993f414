// for loops (C-style with break/continue, over a range, over a header
// stack) and every compound assignment operator (P4_16 v1.2.5 §12.4, §12.8).
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header data_t {
    bit<8>  n;
    bit<8>  x;
    bit<16> y;
    bit<8>  sum;
    bit<8>  prod;
    bit<8>  bits;
    bit<8>  total;
    bit<8>  m;
}

header item_t {
    bit<8> v;
}

struct headers_t {
    ethernet_t ethernet;
    data_t     data;
    item_t[3]  items;
}

struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ethernet);
        pkt.extract(hdr.data);
        pkt.extract(hdr.items.next);
        pkt.extract(hdr.items.next);
        pkt.extract(hdr.items.next);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply {
        // 1 + 2 + 4 + ... up to n, skipping 3, never past 10.
        bit<8> s = 0;
        for (bit<8> i = 1; i <= hdr.data.n; i = i + 1) {
            if (i == 3) {
                continue;
            }
            if (i > 10) {
                break;
            }
            s += i;
        }
        hdr.data.sum = s;

        bit<8> p = 1;
        for (bit<8> k in 1 .. 4) {
            p *= k;
        }
        hdr.data.prod = p;

        // Population count, a loop without initialiser.
        bit<8> v = hdr.data.x;
        bit<8> c = 0;
        for (; v != 0; v >>= 1) {
            c += v & 1;
        }
        hdr.data.bits = c;

        bit<8> t = 0;
        for (item_t it in hdr.items) {
            t = t + it.v;
        }
        hdr.data.total = t;

        hdr.data.y += 0x0100;
        hdr.data.y -= 1;
        hdr.data.y <<= 2;
        hdr.data.y |= 0x8000;
        hdr.data.y ^= 0x0003;
        hdr.data.y &= 0xfff0;
        hdr.data.y >>= 4;
        hdr.data.y |+|= 0xff00;
        hdr.data.y |-|= 1;

        bit<8> m = 7;
        m *= 3;
        m /= 2;
        m %= 4;
        hdr.data.m = m;
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
        pkt.emit(hdr.items);
    }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
