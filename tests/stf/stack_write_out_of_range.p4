// Writing a header stack element whose run-time index is not below the
// stack's size changes nothing (P4_16 §8.18): neither the element nor a
// field of it, and no neighbouring element takes the write.
#include <core.p4>
#include <v1model.p4>

header index_t {
    bit<8> i;
}

header item_t {
    bit<8> v;
}

struct headers_t {
    index_t   idx;
    item_t[2] items;
}

struct meta_t {}

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.idx);
        pkt.extract(h.items.next);
        pkt.extract(h.items.next);
        transition accept;
    }
}

control MyIngress(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        // A field of the element the packet names.
        h.items[h.idx.i].v = 0xaa;
        // The whole element after it (bit<8> arithmetic: 255 + 1 is 0).
        h.items[h.idx.i + 1] = { 0xbb };
    }
}

control MyEgress(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply {} }
control Vrfy(inout headers_t h, inout meta_t m) { apply {} }
control Upd(inout headers_t h, inout meta_t m) { apply {} }
control Dep(packet_out pkt, in headers_t h) { apply { pkt.emit(h); } }

V1Switch(P(), Vrfy(), MyIngress(), MyEgress(), Upd(), Dep()) main;
