// Instantiations as control-typed constructor arguments (`Twice(Inc()) t;`,
// P4_16 §10.3.1): each one is its own instance, living inside the control
// it is passed to and named after the parameter (`t1.s`, as p4c names it).
// `Inc` counts its applications in a register; each `Twice` applies its
// own `Inc` twice a packet, so a gets 2, 4, ... and b (another Twice with
// another Inc) also 2, 4, ...; one shared Inc would give b 4 on the first
// packet.
#include <core.p4>
#include <v1model.p4>

header data_t {
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

control step_t(inout bit<8> x);

control Inc(inout bit<8> x) {
    register<bit<8>>(1) count;
    action nop() { }
    table seen {
        actions = { nop; }
        default_action = nop();
    }
    apply {
        bit<8> c;
        count.read(c, 0);
        c = c + 1;
        count.write(0, c);
        x = c;
        seen.apply();
    }
}

control Twice(inout bit<8> x)(step_t s) {
    apply {
        s.apply(x);
        s.apply(x);
    }
}

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    Twice(Inc()) t1;
    Twice(Inc()) t2;
    apply {
        t1.apply(hdr.data.a);
        t2.apply(hdr.data.b);
        sm.egress_spec = 1;
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.data); }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(),
         MyDeparser()) main;
