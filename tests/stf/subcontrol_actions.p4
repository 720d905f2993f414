// Actions declared in a control instantiated inside another control take
// the instance path as their control-plane name, as p4c names them
// (`MyIngress.adder.add` for action `add` of control type `Adder`
// instantiated as `adder` in `MyIngress`), so the control plane and STF find
// them under the same path as the instance's tables. Also the empty
// parameter list p4c still accepts on a table (`table t() { .. }`).
#include <core.p4>
#include <v1model.p4>

header data_t {
    bit<8> x;
    bit<8> y;
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

// Adds what the control plane says to `v`, keyed on `v` itself.
control Adder(inout bit<8> v) {
    action add(bit<8> k) { v = v + k; }
    action keep() {}
    table by_value() {
        key = { v: exact; }
        actions = { add; keep; }
        default_action = keep;
    }
    apply { by_value.apply(); }
}

control MyIngress(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    Adder() adder;
    action to_port(bit<9> p) { sm.egress_spec = p; }
    table route {
        key = { h.d.x: exact; }
        actions = { to_port; NoAction; }
        default_action = NoAction;
    }
    apply {
        adder.apply(h.d.y);
        route.apply();
    }
}

control MyEgress(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply {} }
control Vrfy(inout headers_t h, inout meta_t m) { apply {} }
control Upd(inout headers_t h, inout meta_t m) { apply {} }
control Dep(packet_out pkt, in headers_t h) { apply { pkt.emit(h.d); } }

V1Switch(P(), Vrfy(), MyIngress(), MyEgress(), Upd(), Dep()) main;
