// Locals and action parameters of a type introduced by `type` (P4_16 §7.6)
// hold values of it; casts move values between it and its underlying type
// (a cast changes no bits), and two values of it compare without one.
#include <core.p4>
#include <v1model.p4>

type bit<16> Port_t;

header data_t {
    Port_t  port;
    bit<16> raw;
    bit<8>  same;
}

struct headers_t {
    data_t d;
}

struct meta_t {}

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.d);
        transition accept;
    }
}

control MyIngress(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    action take(Port_t p) {
        Port_t kept = p;
        h.d.port = kept;
        h.d.raw = (bit<16>)kept + 1;
    }
    table t {
        key = { h.d.raw : exact; }
        actions = { take; NoAction; }
        default_action = NoAction();
    }
    apply {
        sm.egress_spec = 1;
        Port_t before = h.d.port;
        bit<16> as_bits = (bit<16>)before;
        t.apply();
        h.d.same = before == h.d.port ? 8w1 : 8w0;
        if (as_bits == 16w0) {
            h.d.port = (Port_t)(as_bits + 7);
        }
    }
}

control MyEgress(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply {} }
control Vrfy(inout headers_t h, inout meta_t m) { apply {} }
control Upd(inout headers_t h, inout meta_t m) { apply {} }
control Dep(packet_out pkt, in headers_t h) { apply { pkt.emit(h); } }

V1Switch(P(), Vrfy(), MyIngress(), MyEgress(), Upd(), Dep()) main;
