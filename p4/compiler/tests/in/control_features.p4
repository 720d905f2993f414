/* Control features: exact and ternary/range tables with const entries,
 * switch on action_run with fall-through, exit from an action, functions
 * with return values and inout parameters, slices as l-values, concat,
 * signed comparison and arithmetic shift, saturating subtraction, control
 * locals with initialisers, registers and counters. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
header data_t {
    bit<8>  op;
    bit<8>  a;
    bit<8>  b;
    bit<8>  r1;
    bit<8>  r2;
    bit<16> r3;
    bit<8>  flags;
}
struct headers { ethernet_t eth; data_t d; }
struct meta_t { }

bit<8> max8(in bit<8> x, in bit<8> y) {
    return x > y ? x : y;
}

void bump(inout bit<8> x) {
    x = x + 1;
}

parser P(packet_in pkt, out headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        pkt.extract(hdr.d);
        transition accept;
    }
}

control VC(inout headers hdr, inout meta_t meta) { apply { } }

control I(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    register<bit<8>>(4) last_a;
    counter(4, CounterType.packets) per_op;
    bit<8> local_total = 5;

    action set_port(bit<9> port) { sm.egress_spec = port; }
    action add() { hdr.d.r1 = hdr.d.a + hdr.d.b; }
    action sub_sat() { hdr.d.r1 = hdr.d.a |-| hdr.d.b; }
    action signed_cmp() { hdr.d.r1 = ((int<8>) hdr.d.a < (int<8>) hdr.d.b) ? 8w1 : 8w0; }
    action shifty() { hdr.d.r1 = (bit<8>) (((int<8>) hdr.d.a) >> 2); }
    action stop() { hdr.d.r1 = 0xee; exit; }
    action nib(bit<4> v) { hdr.d.r1[7:4] = v; }

    table ops {
        key = { hdr.d.op: exact; }
        actions = { add; sub_sat; signed_cmp; shifty; stop; nib; NoAction; }
        const entries = {
            1: add();
            2: sub_sat();
            3: signed_cmp();
            4: shifty();
            5: stop();
            6: nib(0xa);
        }
        default_action = NoAction();
    }

    table acl {
        key = { hdr.d.a: ternary; hdr.d.b: range; }
        actions = { set_port; }
        const entries = {
            (0x10 &&& 0xf0, 0 .. 255): set_port(3);
            (_, 100 .. 200): set_port(4);
        }
        default_action = set_port(1);
    }

    apply {
        per_op.count((bit<32>) hdr.d.op[1:0]);
        bit<8> prev;
        last_a.read(prev, 0);
        last_a.write(0, hdr.d.a);
        hdr.d.r2 = prev;
        acl.apply();
        switch (ops.apply().action_run) {
            add: { hdr.d.flags = 1; }
            sub_sat:
            signed_cmp: { hdr.d.flags = 2; }
            default: { hdr.d.flags = 3; }
        }
        hdr.d.r3 = hdr.d.a ++ max8(hdr.d.a, hdr.d.b);
        bump(local_total);
        hdr.d.flags = hdr.d.flags | (local_total << 4);
    }
}

control E(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
