// Meter colouring: an indirect packet meter indexed by a header field and
// a direct packet meter on a table's entries; both colours (0 green,
// 1 yellow, 2 red) are written into the packet.
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header data_t {
    bit<8> idx;
    bit<8> color_indirect;
    bit<8> color_direct;
    bit<8> pad;
}

struct headers_t {
    ethernet_t ethernet;
    data_t     data;
}

struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ethernet);
        pkt.extract(hdr.data);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    meter(4, MeterType.packets) flow_meter;
    direct_meter<bit<8>>(MeterType.packets) entry_meter;

    action mark_direct() {
        entry_meter.read(hdr.data.color_direct);
    }
    table policer {
        key = { hdr.data.idx : exact; }
        actions = { mark_direct; }
        default_action = mark_direct();
        meters = entry_meter;
    }
    apply {
        flow_meter.execute_meter((bit<32>)hdr.data.idx, hdr.data.color_indirect);
        policer.apply();
        sm.egress_spec = 1;
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.data);
    }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
