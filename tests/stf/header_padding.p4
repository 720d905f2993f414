// A header that is not a whole number of bytes (p4c's table-entries-*
// samples have a 41-bit one): p4c pads it for BMv2 with a last field up to
// the next byte, so it takes whole bytes on the wire and its padding bits
// go out as they came in. `tag_t` is 13 bits: 3 bits of padding.
#include <core.p4>
#include <v1model.p4>

header tag_t {
    bit<8> a;
    bit<4> b;
    bit<1> c;
}

header next_t {
    bit<8> x;
}

struct headers_t {
    tag_t  tag;
    tag_t  added;
    next_t next;
}

struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.tag);
        pkt.extract(hdr.next);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply {
        hdr.tag.b = hdr.tag.b + 1;
        hdr.tag.c = 0;
        hdr.added = { 0x55, 0xf, 1 };
        hdr.next.x = hdr.next.x + (bit<8>)hdr.tag.minSizeInBits();
        sm.egress_spec = 1;
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.tag);
        pkt.emit(hdr.added);
        pkt.emit(hdr.next);
    }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(),
         MyDeparser()) main;
