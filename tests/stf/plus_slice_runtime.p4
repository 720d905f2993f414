// `e[lo +: w]` whose low bit `lo` is known only at run time (P4_16 v1.2.5
// §8.6; p4c accepts any unsigned `lo` there): read, it is the `w` bits of
// `e` from `lo` up, bits past the top of `e` reading as 0 (an `int<W>` brings
// in no sign bits); written, it changes those bits of `e` only, and bits
// that would land past the top of `e` are dropped, `int<W>` or `bit<W>`.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  k;
    bit<16> a;
    bit<16> b;
    bit<8>  c;
    bit<8>  d;
    bit<32> x;
    bit<32> r;
    bit<16> e;
}

struct headers_t {
    h_t h;
}

struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        // The bytes of x in reverse order, one run-time slice at a time.
        bit<32> reversed = 0;
        for (bit<8> i = 0; i < 32; i = i + 8) {
            reversed = (reversed << 8) | (bit<32>)hdr.h.x[i +: 8];
        }
        hdr.h.r = reversed;
        hdr.h.c = hdr.h.a[hdr.h.k +: 8];
        hdr.h.b[hdr.h.k +: 4] = 4w0xf;
        int<16> all_ones = -1;
        hdr.h.d = all_ones[hdr.h.k +: 8];
        int<16> signed_bits = 0;
        signed_bits[hdr.h.k +: 4] = 4w0xf;
        hdr.h.e = (bit<16>)signed_bits;
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.h);
    }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(),
         MyDeparser()) main;
