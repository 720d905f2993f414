// A deparser that hands its packet to sub-controls (P4_16 §13: a control
// may apply a control instance, passing its own packet_out along).
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header tag_t {
    bit<8> kind;
    bit<8> value;
}

struct headers_t {
    ethernet_t ethernet;
    tag_t      outer;
    tag_t      inner;
}

struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ethernet);
        pkt.extract(hdr.outer);
        transition select(hdr.outer.kind) {
            1: inner;
            default: accept;
        }
    }
    state inner {
        pkt.extract(hdr.inner);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply {
        hdr.outer.value = hdr.outer.value + 1;
        sm.egress_spec = 1;
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

// Emits the tags innermost first when `swap` is set.
control EmitTags(packet_out pkt, in tag_t a, in tag_t b, in bool swap) {
    apply {
        if (swap) {
            pkt.emit(b);
            pkt.emit(a);
        } else {
            pkt.emit(a);
            pkt.emit(b);
        }
    }
}

control MyDeparser(packet_out pkt, in headers_t hdr) {
    EmitTags() tags;
    apply {
        pkt.emit(hdr.ethernet);
        tags.apply(pkt, hdr.outer, hdr.inner, hdr.outer.value == 3);
    }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
