// A meter may write its colour into a plain enum, as p4c's v1model back
// end allows: it turns a program's enums into bit<32> numbered in
// declaration order, and BMv2 writes the colour code (0 green, 1 yellow,
// 2 red) there, so the code becomes the member declared at that position.
// The members here are declared GREEN, RED, YELLOW (stratum's
// method_calls declares them so): a yellow packet reads as RED and a red
// one as YELLOW. Each member is written into the packet as its own byte:
// 0x20 (GREEN), 0x21 (RED), 0x22 (YELLOW).
#include <core.p4>
#include <v1model.p4>

enum light_t { GREEN, RED, YELLOW }

header data_t {
    bit<8> idx;
    bit<8> indirect;
    bit<8> direct;
}

struct headers_t {
    data_t data;
}

struct meta_t {
    light_t indirect;
    light_t direct;
}

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.data);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control as_byte(in light_t l, out bit<8> b) {
    apply {
        switch (l) {
            light_t.GREEN: { b = 0x20; }
            light_t.RED: { b = 0x21; }
            light_t.YELLOW: { b = 0x22; }
        }
    }
}

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    meter(4, MeterType.packets) flow_meter;
    direct_meter<light_t>(MeterType.packets) entry_meter;
    as_byte() b1;
    as_byte() b2;

    action mark_direct() {
        entry_meter.read(meta.direct);
    }
    table policer {
        key = { hdr.data.idx : exact; }
        actions = { mark_direct; }
        default_action = mark_direct();
        meters = entry_meter;
    }
    apply {
        flow_meter.execute_meter<light_t>((bit<32>)hdr.data.idx, meta.indirect);
        policer.apply();
        b1.apply(meta.indirect, hdr.data.indirect);
        b2.apply(meta.direct, hdr.data.direct);
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
