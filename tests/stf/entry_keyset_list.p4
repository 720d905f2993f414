// An entry's key set written as a list expression `{ a, b }` is the tuple of
// the table's key values, one element per key (p4c types an entry's key set
// against the tuple of the keys): `{ e }` for a one-key table is `e`, and
// `{ a, b }` for a two-key table is `(a, b)`.
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
    action port(bit<9> p) { sm.egress_spec = p; }
    action mark(bit<16> v) { hdr.h.c = v; }
    table one {
        key = { hdr.h.a : exact; }
        actions = { port; }
        const entries = {
            { 8w0x10 } : port(3);
            { 0x20 } : port(4);
        }
        default_action = port(1);
    }
    table two {
        key = { hdr.h.a : exact; hdr.h.b : ternary; }
        actions = { mark; NoAction; }
        const entries = {
            { 0x10, 0x01 } : mark(0x1001);
            (0x20, 0x02) : mark(0x2002);
        }
        default_action = NoAction();
    }
    apply {
        one.apply();
        two.apply();
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.h); }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
