// Don't-care type arguments (P4_16: `_` as a type argument leaves it to
// be inferred): `pick<_>(a, b, c)` is `pick(a, b, c)` with T taken from the
// arguments, and `pkt.extract<_>(h)` extracts h's own header type.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  a;
    bit<8>  b;
    bit<16> c;
}

struct headers_t {
    h_t h;
}

struct meta_t { }

T pick<T>(in T first, in T second, in bool take_first) {
    return take_first ? first : second;
}

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract<_>(hdr.h);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.h.a = pick<_>(hdr.h.a, hdr.h.b, hdr.h.a > hdr.h.b);
        hdr.h.c = pick<_>(hdr.h.c, 16w0xffff, hdr.h.c != 0);
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.h); }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(),
         MyDeparser()) main;
