// A parser value set over two select keys whose element type is a struct
// with a nested struct: its members are the flattened fields in order
// (here kind then inner.sub), as the keys are.
#include <core.p4>
#include <v1model.p4>

header tag_t {
    bit<8> kind;
    bit<8> sub;
    bit<8> mark;
}

struct headers_t {
    tag_t tag;
}

struct meta_t {}

struct inner_t {
    bit<8> sub;
}

struct pair_t {
    bit<8>  kind;
    inner_t inner;
}

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    value_set<pair_t>(4) special;

    state start {
        pkt.extract(h.tag);
        transition select(h.tag.kind, h.tag.sub) {
            special: marked;
            default: accept;
        }
    }
    state marked {
        h.tag.mark = 1;
        transition accept;
    }
}

control MyIngress(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply { sm.egress_spec = 1; }
}

control MyEgress(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply {} }
control Vrfy(inout headers_t h, inout meta_t m) { apply {} }
control Upd(inout headers_t h, inout meta_t m) { apply {} }
control Dep(packet_out pkt, in headers_t h) { apply { pkt.emit(h); } }

V1Switch(P(), Vrfy(), MyIngress(), MyEgress(), Upd(), Dep()) main;
