// A control that holds an instance of a control with actions, itself
// instantiated twice: each path gets its own actions and table
// (`MyIngress.first.inner.set_a`, `MyIngress.second.inner.set_a`), as p4c
// names them.
#include <core.p4>
#include <v1model.p4>

header data_t {
    bit<8> k;
    bit<8> a;
    bit<8> b;
}

struct headers_t {
    data_t data;
}

struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.data);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control Stage(inout headers_t hdr) {
    action set_a(bit<8> v) { hdr.data.a = hdr.data.a + v; }
    action set_b(bit<8> v) { hdr.data.b = v; }
    table t {
        key = { hdr.data.k : exact; }
        actions = { set_a; set_b; NoAction; }
        default_action = NoAction();
    }
    apply { t.apply(); }
}

control Outer(inout headers_t hdr) {
    Stage() inner;
    apply { inner.apply(hdr); }
}

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    Outer() first;
    Outer() second;
    apply {
        first.apply(hdr);
        second.apply(hdr);
        sm.egress_spec = 1;
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.data); }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
