// bit<W> above 128 bits (P4_16 §8.6-8.7): a bit<336> header field at a
// 4-bit offset copied, added to (carry across 64-bit limbs), sliced (read
// and write), shifted, cast to bit<320>, compared with a folded wide
// constant above 2^128, concatenated from two 128-bit slices, and hashed
// (csum16 over all 336 bits: the field list takes it in 128-bit pieces),
// divided, added to with saturation, and kept in a bit<320> register.
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header wide_t {
    bit<4>   tag;
    bit<336> a;
    bit<4>   tag2;
    bit<336> b;
    bit<320> c;
    bit<16>  top;
    bit<8>   flags;
    bit<256> cat;
    bit<16>  csum;
    bit<336> q;
    bit<8>   r;
    bit<336> sat;
    bit<320> prev;
}

struct headers_t {
    ethernet_t ethernet;
    wide_t     wide;
}

struct meta_t { }

// 2^192 - 1: folded at compile time into a constant wider than 128 bits.
const bit<336> LOW192 = ((bit<336>)1 << 192) - 1;

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ethernet);
        pkt.extract(hdr.wide);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    // Remembers the last packet's `a` (cut to 320 bits) across packets.
    register<bit<320>>(2) last_a;
    // Takes a slice of a wide field as inout: copied back into its bits.
    action or_low(inout bit<8> x) { x = x | 0xef; }
    apply {
        bit<336> a = hdr.wide.a;
        hdr.wide.b = a + 1;
        hdr.wide.b[335:320] = 16w0xbe00;
        or_low(hdr.wide.b[327:320]);
        hdr.wide.c = (bit<320>)(a >> 8);
        hdr.wide.top = a[335:320];
        bit<8> f = 0;
        if (a < hdr.wide.b) { f = f | 1; }
        if (a == LOW192) { f = f | 2; }
        if (a >= (bit<336>)1 << 300) { f = f | 4; }
        // 2^335 + 5 written out: a literal wider than 128 bits.
        if (a == 336w0x8000_0000_0000_0000_0000_0000_0000_0000_0000_0000_0000_0000_0000_0000_0000_0000_0000_0000_0000_0000_0005) {
            f = f | 8;
        }
        hdr.wide.flags = f;
        hdr.wide.cat = a[127:0] ++ a[335:208];
        hash(hdr.wide.csum, HashAlgorithm.csum16, 16w0, { hdr.wide.a }, 32w65536);
        hdr.wide.q = a / 3;
        hdr.wide.r = (bit<8>)(a % 3);
        hdr.wide.sat = a |+| ((bit<336>)1 << 335);
        last_a.read(hdr.wide.prev, 1);
        last_a.write(1, (bit<320>)a);
        sm.egress_spec = 1;
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.wide);
    }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
