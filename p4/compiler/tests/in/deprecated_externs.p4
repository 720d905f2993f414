/* Deprecated v1model calls still found in older programs: resubmit(data),
 * clone3(type, session, data) and mark_to_drop() without arguments. The
 * fields named in `data` travel with the packet as a made-up field list. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
struct headers { ethernet_t eth; }
struct meta_t { bit<8> count; bit<8> other; bit<8> tag; }

// A resubmitted packet's preserved `count` is set before the parser runs.
parser P(packet_in pkt, out headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        transition select(meta.count) { 1: again; default: accept; }
    }
    state again { meta.other = 0x42; transition accept; }
}

control VC(inout headers hdr, inout meta_t meta) { apply { } }

control I(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        if (meta.count == 0) {
            meta.count = 1;
            meta.other = 9;
            sm.egress_spec = 3;
            resubmit({ meta.count });
        } else {
            mark_to_drop();
        }
    }
}

control E(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        meta.tag = 7;
        clone3(CloneType.E2E, 32w5, { meta.tag });
    }
}

control CC(inout headers hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.eth); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
