// A meter may write its colour into a serializable enum over bit<W>, which
// is held as that bit<W> (P4_16 §8.3): PINS programs declare
// `direct_meter<MeterColor_t>` with `enum bit<2> MeterColor_t`. Both meters
// here write into such an enum; the colours are then told apart by their
// enum members and written into the packet as 0x10 (green), 0x11 (yellow)
// and 0x12 (red).
#include <core.p4>
#include <v1model.p4>

enum bit<2> colour_t {
    GREEN = 0,
    YELLOW = 1,
    RED = 2
}

header data_t {
    bit<8> idx;
    bit<8> indirect;
    bit<8> direct;
}

struct headers_t {
    data_t data;
}

struct meta_t {
    colour_t indirect;
    colour_t direct;
}

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.data);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control to_byte(in colour_t c, out bit<8> b) {
    apply {
        if (c == colour_t.GREEN) {
            b = 0x10;
        } else if (c == colour_t.YELLOW) {
            b = 0x11;
        } else if (c == colour_t.RED) {
            b = 0x12;
        } else {
            b = 0xff;
        }
    }
}

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    meter(4, MeterType.packets) flow_meter;
    direct_meter<colour_t>(MeterType.packets) entry_meter;
    to_byte() c1;
    to_byte() c2;

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
        meta.indirect = colour_t.RED;
        meta.direct = colour_t.RED;
        flow_meter.execute_meter((bit<32>)hdr.data.idx, meta.indirect);
        policer.apply();
        c1.apply(meta.indirect, hdr.data.indirect);
        c2.apply(meta.direct, hdr.data.direct);
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
