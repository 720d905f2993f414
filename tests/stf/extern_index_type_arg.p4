// v1model.p4 version 20200408 gives `counter<I>`, `meter<I>` and
// `register<T, I>` an index type parameter: their methods take `in I
// index`, so a bit<8> value indexes them directly (before that version the
// index is bit<32>, and a bit<8> one must be cast).
#include <core.p4>
#define V1MODEL_VERSION 20200408
#include <v1model.p4>

header h_t {
    bit<8> slot;
    bit<8> value;
    bit<8> before;
}

struct headers_t {
    h_t h;
}

struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    register<bit<8>, bit<8>>(16) last_value;
    counter<bit<8>>(16, CounterType.packets) per_slot;
    apply {
        // Indexed by a bit<8> field, and by an integer without a width.
        last_value.read(hdr.h.before, hdr.h.slot);
        last_value.write(hdr.h.slot, hdr.h.value);
        per_slot.count(hdr.h.slot);
        per_slot.count(15);
        sm.egress_spec = 1;
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.h); }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
