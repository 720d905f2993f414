// Keys written as a field masked with a constant (P4_16 §14.2.1: a key is
// any expression; `f & mask` matches only the bits the mask keeps). The
// control plane names such a key after its field, whichever side the
// constant is on, as p4c's table-key naming does, so `add` spells
// `hdr.h.lo` and `hdr.h.tag`, not the mask.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<32> lo;
    bit<8>  tag;
    bit<8>  res;
}

struct headers_t { h_t h; }
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition accept;
    }
}

control Ing(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action mark(bit<8> v, bit<9> port) {
        hdr.h.res = v;
        sm.egress_spec = port;
    }
    table t {
        key = {
            hdr.h.lo & 0x00ff00ff : exact;
            0xf0 & hdr.h.tag      : exact;
        }
        actions = { mark; NoAction; }
        default_action = NoAction();
    }
    apply { t.apply(); }
}

control Eg(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control Vck(inout headers_t hdr, inout meta_t meta) { apply { } }
control Cck(inout headers_t hdr, inout meta_t meta) { apply { } }
control Dep(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), Vck(), Ing(), Eg(), Cck(), Dep()) main;
