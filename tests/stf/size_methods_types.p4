// minSizeInBits/minSizeInBytes/maxSizeInBits/maxSizeInBytes of every
// serializable type (P4_16 "Compile-time size determination", the table of
// sizes by type): bit strings, bool, serializable enums, tuples, structs
// holding headers (a varbit counts 0 for the minimum, its maximum for the
// maximum), header unions (the largest member, for both), and type names:
// a typedef and a `type` take their underlying type's size. The results are
// compile-time `int`s, so they may initialise a constant.
#include <core.p4>
#include <v1model.p4>

typedef bit<12> T12;
type bit<6> N6;
enum bit<4> E { X = 1 }

header p_t { bit<16> p; }

header v_t {
    bit<8>     len;
    varbit<16> d;
}

header_union u_t {
    p_t a;
    v_t v;
}

struct s_t {
    p_t  h;
    v_t  v;
    bool b;
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

struct headers_t { res_t res; }
struct meta_t { bit<8> x; }

const int TYPE_SIZES = T12.maxSizeInBits() + N6.minSizeInBytes();

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start { transition accept; }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply {
        E e = E.X;
        tuple<bit<3>, bool> t = {1, true};
        u_t u;
        s_t s;
        hdr.res.setValid();
        hdr.res.r0 = meta.x.minSizeInBits();
        hdr.res.r1 = e.maxSizeInBits();
        hdr.res.r2 = t.minSizeInBits();
        hdr.res.r3 = TYPE_SIZES;
        hdr.res.r4 = u.minSizeInBits();
        hdr.res.r5 = u.maxSizeInBits();
        hdr.res.r6 = s.minSizeInBits();
        hdr.res.r7 = s.maxSizeInBytes();
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
