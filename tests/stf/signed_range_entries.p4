// Range entries written by the control plane on a signed (int<8>) key.
// P4Runtime 1.x does not define them: its "Bytestrings" section says table
// key fields may not be of type int<W> (its signed encoding, two's
// complement with sign extension, applies to P4Data only). We do what BMv2
// does with such a key: the control plane writes its W-bit two's complement
// pattern, and a range compares patterns as unsigned numbers, so a range of
// negative values is written low pattern first (-16..-5 is 0xf0->0xfb) and
// one across 0 cannot be written (0xfb->0x05 has low above high; P4Runtime
// refuses it with INVALID_ARGUMENT, `translate::key_from_proto`).
#include <core.p4>
#include <v1model.p4>

header data_t {
    int<8> v;
    bit<8> class;
}

struct headers_t { data_t d; }
struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.d);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    action set_class(bit<8> c) { hdr.d.class = c; }
    table classify {
        key = { hdr.d.v : range; }
        actions = { set_class; NoAction; }
        default_action = NoAction;
    }
    apply {
        sm.egress_spec = 1;
        classify.apply();
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.d); }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
