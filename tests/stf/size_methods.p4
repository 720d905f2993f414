// minSizeInBits/minSizeInBytes/maxSizeInBits/maxSizeInBytes (P4_16
// §8.9.2): compile-time sizes of headers (a varbit counts 0 for the minimum
// and its maximum for the maximum; a struct field counts all its bits),
// header stacks and header unions (their largest member, for the minimum
// too, as the spec's table has it).
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  a;
    bit<16> b;
}

header v_t {
    bit<8>     len;
    varbit<32> d;
}

struct s_t {
    bit<4> x;
    bool   y;
    bit<3> z;
}

header hs_t {
    s_t    s;
    bit<8> c;
}

header_union u_t {
    h_t  h;
    hs_t s;
}

header res_t {
    bit<8> r0;
    bit<8> r1;
    bit<8> r2;
    bit<8> r3;
    bit<8> r4;
    bit<8> r5;
    bit<8> r6;
    bit<8> r7;
}

struct headers_t {
    h_t    h;
    v_t    v;
    u_t    u;
    h_t[3] st;
    res_t  res;
}

struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start { transition accept; }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply {
        hdr.res.setValid();
        hdr.res.r0 = hdr.h.minSizeInBits();
        hdr.res.r1 = hdr.h.minSizeInBytes();
        hdr.res.r2 = hdr.v.minSizeInBits();
        hdr.res.r3 = hdr.v.maxSizeInBits();
        hdr.res.r4 = hdr.v.maxSizeInBytes();
        hdr.res.r5 = hdr.u.minSizeInBits();
        hdr.res.r6 = hdr.u.maxSizeInBits();
        hdr.res.r7 = hdr.st.maxSizeInBytes();
        sm.egress_spec = 1;
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.res); }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
