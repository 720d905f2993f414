/* Tunnelling with header stacks: MPLS labels pushed and popped, VLAN tags
 * parsed into a stack with .next / .last. */
#include <core.p4>
#include <v1model.p4>

#define MAX_LABELS 4
#define ETHERTYPE(x) (16w ## x)

header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
header vlan_t { bit<3> pcp; bit<1> dei; bit<12> vid; bit<16> etherType; }
header mpls_t { bit<20> label; bit<3> tc; bit<1> bos; bit<8> ttl; }
header myTunnel_t { bit<16> proto_id; bit<16> dst_id; }

struct headers {
    ethernet_t ethernet;
    vlan_t[2] vlan;
    mpls_t[MAX_LABELS] mpls;
    myTunnel_t myTunnel;
}
struct metadata { bit<8> depth; }

parser TunnelParser(packet_in pkt, out headers hdr, inout metadata meta,
                    inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            0x8100 &&& 0xEFFF: parse_vlan;   // 0x8100 and 0x9100
            0x8847: parse_mpls;
            0x1212: parse_tunnel;
            default: accept;
        }
    }
    state parse_vlan {
        pkt.extract(hdr.vlan.next);
        transition select(hdr.vlan.last.etherType) {
            0x8100: parse_vlan;
            0x8847: parse_mpls;
            _: accept;
        }
    }
    state parse_mpls {
        pkt.extract(hdr.mpls.next);
        meta.depth = meta.depth + 1;
        transition select(hdr.mpls.last.bos) {
            1w0: parse_mpls;
            1w1: accept;
        }
    }
    state parse_tunnel {
        pkt.extract(hdr.myTunnel);
        transition accept;
    }
}

control NoVerify(inout headers hdr, inout metadata meta) { apply {} }

control TunnelIngress(inout headers hdr, inout metadata meta,
                      inout standard_metadata_t standard_metadata) {
    action push_label(bit<20> label) {
        hdr.mpls.push_front(1);
        hdr.mpls[0].setValid();
        hdr.mpls[0].label = label;
        hdr.mpls[0].ttl = 64;
        hdr.mpls[0].bos = (hdr.mpls[1].isValid() ? 1w0 : 1w1);
    }
    action pop_label() {
        hdr.mpls.pop_front(1);
    }
    action tunnel_forward(bit<9> port) {
        standard_metadata.egress_spec = port;
    }
    table mpls_tbl {
        key = { hdr.mpls[0].label: exact; hdr.vlan[0].vid: ternary; }
        actions = { push_label; pop_label; NoAction; }
        default_action = NoAction();
    }
    table tunnel_exact {
        key = { hdr.myTunnel.dst_id : exact; }
        actions = { tunnel_forward; NoAction; }
        size = MAX_LABELS * 256;
    }
    apply {
        if (hdr.myTunnel.isValid()) {
            tunnel_exact.apply();
        } else if (hdr.mpls[0].isValid() || hdr.vlan[0].isValid()) {
            mpls_tbl.apply();
        }
        if (hdr.mpls.lastIndex == 3) { hdr.mpls[3].setInvalid(); }
        hdr.ethernet.etherType = hdr.mpls[0].isValid() ? ETHERTYPE(0x8847) : hdr.ethernet.etherType;
    }
}

control NoEgress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply {} }
control NoCompute(inout headers hdr, inout metadata meta) { apply {} }

control TunnelDeparser(packet_out pkt, in headers hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.vlan);
        pkt.emit(hdr.mpls);
        pkt.emit(hdr.myTunnel);
    }
}

V1Switch(TunnelParser(), NoVerify(), TunnelIngress(), NoEgress(), NoCompute(), TunnelDeparser()) main;
