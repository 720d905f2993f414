/* Keys, field lists and digests of the non-bit scalar types: error, plain
 * enum and bool. */
#include <core.p4>
#include <v1model.p4>

enum Mood { CALM, ANGRY }

header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
header extra_t { bit<32> x; }
struct headers { ethernet_t eth; extra_t extra; }
struct meta_t { Mood mood; bit<16> h; }
struct report_t { error e; Mood mood; bool short; }

parser P(packet_in pkt, out headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        pkt.extract(hdr.extra);
        transition accept;
    }
}

control VC(inout headers hdr, inout meta_t meta) { apply { } }

control I(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action to(bit<9> port) { sm.egress_spec = port; }
    table by_error {
        key = {
            sm.parser_error: exact;
            meta.mood: exact;
            hdr.extra.isValid(): exact;
        }
        actions = { to; }
        const entries = {
            (error.PacketTooShort, Mood.CALM, false): to(2);
            (error.NoError, Mood.CALM, true): to(3);
        }
        default_action = to(1);
    }
    apply {
        meta.mood = Mood.CALM;
        by_error.apply();
        hash(meta.h, HashAlgorithm.identity, 16w0, { sm.parser_error, meta.mood }, 32w65536);
        report_t r = { sm.parser_error, meta.mood, !hdr.extra.isValid() };
        digest<report_t>(1, r);
    }
}

control E(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
