// Structs as header fields (P4_16 v1.2.2+ §7.2.2): a header field may be a
// struct of bit<W>/bool fields (nested structs too); the header lays them
// out flattened in declaration order for extract, emit and checksums, and
// `hdr.h.s.f` reads and writes them.
#include <core.p4>
#include <v1model.p4>

struct inner_t {
    bit<4> hi;
    bool   flag;
    bit<3> lo;
}

struct pair_t {
    bit<8>  a;
    inner_t inner;
    bit<16> b;
}

header sh_t {
    bit<8>  kind;
    pair_t  p;
    bit<8>  tag;
    bit<16> csum;
}

// The struct as it arrived, copied whole.
header orig_t {
    pair_t p;
}

struct headers_t {
    sh_t   sh;
    orig_t orig;
}

struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.sh);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply {
        pair_t saved = hdr.sh.p;
        if (hdr.sh.p.inner.flag) {
            hdr.sh.p.a = hdr.sh.p.a + 1;
        }
        hdr.sh.p.inner.lo = hdr.sh.p.inner.hi[2:0];
        hdr.sh.p.inner.flag = !hdr.sh.p.inner.flag;
        hdr.sh.p.b = hdr.sh.p.b + (bit<16>)hdr.sh.p.inner.hi;
        hdr.sh.kind = hdr.sh.kind + (bit<8>)hdr.sh.p.inner.lo;
        hdr.orig.setValid();
        hdr.orig.p = saved;
        sm.egress_spec = 1;
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyCompute(inout headers_t hdr, inout meta_t meta) {
    apply {
        update_checksum(hdr.sh.isValid(), { hdr.sh.kind, hdr.sh.p, hdr.sh.tag },
                        hdr.sh.csum, HashAlgorithm.csum16);
    }
}

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.sh);
        pkt.emit(hdr.orig);
    }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
