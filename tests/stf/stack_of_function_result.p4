// An element of a header stack that a function returns is a value: it can
// be read (`f()[i].a`, `f()[i].isValid()`, and in a parser `f().last`)
// without being stored first (P4_16 §8.18: stack elements are expressions; p4c's
// issue3001-1 tests `h()[0].isValid()`).
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> b;
}

struct headers_t {
    h_t h;
}

struct meta_t {
    bit<8> last_a;
}

h_t[3] make(in bit<8> x) {
    h_t[3] s;
    s.push_front(2);
    s[1].setValid();
    s[1].a = x + 1;
    s[0].setValid();
    s[0].a = x;
    return s;
}

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        meta.last_a = make(hdr.h.a).last.a;
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        bit<8> flags = 0;
        if (make(hdr.h.a)[0].isValid()) { flags = flags | 1; }
        if (make(hdr.h.a)[2].isValid()) { flags = flags | 2; }
        if (meta.last_a == hdr.h.a + 1) { flags = flags | 4; }
        hdr.h.a = make(hdr.h.a)[1].a;
        hdr.h.b = flags;
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.h); }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
