// `{#}`, the invalid header (P4_16 §8.17), assigned and cast, and `...` in
// struct and header initialisers: the fields not named take their default
// values (§8.26), an invalid header for a header field.
#include <core.p4>
#include <v1model.p4>

header data_t {
    bit<8> op;
    bit<8> r;
}

header opt_t {
    bit<8> x;
}

struct headers_t {
    data_t d;
    opt_t  opt;
}

struct summary_t {
    bit<8> p;
    bool   f;
    opt_t  o;
}

struct meta_t {}

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.d);
        pkt.extract(h.opt);
        transition accept;
    }
}

control MyIngress(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (h.d.op == 1) {
            h.opt = {#};
        } else if (h.d.op == 2) {
            h.opt = (opt_t){#};
            if (!h.opt.isValid()) {
                h.opt.setValid();
                h.opt.x = 0xee;
            }
        }
        summary_t s = { p = 7, ... };
        data_t t = { r = 0x30, ... };
        h.d.r = s.p + (s.f ? 8w1 : 8w0) + (s.o.isValid() ? 8w2 : 8w0)
                + t.r + t.op + (t.isValid() ? 8w0x40 : 8w0);
    }
}

control MyEgress(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply {} }
control Vrfy(inout headers_t h, inout meta_t m) { apply {} }
control Upd(inout headers_t h, inout meta_t m) { apply {} }
control Dep(packet_out pkt, in headers_t h) { apply { pkt.emit(h); } }

V1Switch(P(), Vrfy(), MyIngress(), MyEgress(), Upd(), Dep()) main;
