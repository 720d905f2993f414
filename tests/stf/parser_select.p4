// Parser select on a tuple with masks, ranges and don't-cares and no
// default (a miss is error.NoMatch), and a header stack filled with .next
// past its size (error.StackOutOfBounds). The egress port tells the error;
// the low byte of the destination MAC counts the tags parsed.
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
    tag_t[3]   tags;
}

struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType, hdr.ethernet.srcAddr[7:0]) {
            (0x88b5, 0x00 &&& 0x80): parse_tag;
            (0x88b6, 0x10 .. 0x1f): parse_tag;
            (0x0800, _): accept;
        }
    }
    state parse_tag {
        pkt.extract(hdr.tags.next);
        transition select(hdr.tags.last.kind) {
            1: parse_tag;
            default: accept;
        }
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply {
        bit<8> n = 0;
        if (hdr.tags[0].isValid()) { n = n + 1; }
        if (hdr.tags[1].isValid()) { n = n + 1; }
        if (hdr.tags[2].isValid()) { n = n + 1; }
        hdr.ethernet.dstAddr[7:0] = n;
        if (sm.parser_error == error.NoError) {
            sm.egress_spec = 1;
        } else if (sm.parser_error == error.NoMatch) {
            sm.egress_spec = 2;
        } else if (sm.parser_error == error.StackOutOfBounds) {
            sm.egress_spec = 3;
        } else {
            mark_to_drop(sm);
        }
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.tags);
    }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
