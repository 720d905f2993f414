// A serializable enum converts implicitly to its underlying type
// (P4_16 §8.11.2): assigned to a field of that type, compared with one,
// in arithmetic, sliced, and as a header stack index; a signed `int<W>`
// indexes a stack too. Two values of one enum still compare as the enum.
#include <core.p4>
#include <v1model.p4>

enum bit<16> Kind {
    DATA = 0x0800,
    CTRL = 0x8100
}

enum bit<8> Slot {
    FIRST  = 0,
    SECOND = 1
}

header msg_t {
    Kind    kind;
    bit<16> raw;      // the kind as a plain number
    bit<16> other;    // compared with the kind
    bit<8>  hi;       // kind[15:8]
    bit<16> next;     // kind + 1
    Slot    slot;     // which item to mark
    int<8>  sidx;     // a signed index: item sidx gets 0x5a
    bit<8>  same;     // 1 if kind == Kind.CTRL
}

header item_t {
    bit<8> v;
}

struct headers_t {
    msg_t     msg;
    item_t[2] items;
}

struct meta_t {}

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.msg);
        pkt.extract(h.items.next);
        pkt.extract(h.items.next);
        transition accept;
    }
}

control MyIngress(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        h.msg.raw = h.msg.kind;
        if (h.msg.kind == h.msg.other) {
            sm.egress_spec = 2;
        }
        h.msg.hi = h.msg.kind[15:8];
        h.msg.next = h.msg.kind + 1;
        h.items[h.msg.slot].v = 0xee;
        h.items[h.msg.sidx].v = 0x5a;
        h.msg.same = h.msg.kind == Kind.CTRL ? 8w1 : 8w0;
    }
}

control MyEgress(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply {} }
control Vrfy(inout headers_t h, inout meta_t m) { apply {} }
control Upd(inout headers_t h, inout meta_t m) { apply {} }
control Dep(packet_out pkt, in headers_t h) { apply { pkt.emit(h); } }

V1Switch(P(), Vrfy(), MyIngress(), MyEgress(), Upd(), Dep()) main;
