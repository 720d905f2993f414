// lookahead<T>() of a struct (P4_16 §12.8.3): the next bits of the packet,
// split into the struct's fields in order, without moving the cursor.
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header tag_t {
    bit<4>  version;
    bit<4>  kind;
    bit<8>  len;
}

header out_t {
    bit<8> version;
    bit<8> kind;
    bit<8> flag;
}

struct peek_t {
    bit<4> version;
    bit<4> kind;
    bool   urgent;
    bit<7> rest;
}

struct headers_t {
    ethernet_t ethernet;
    tag_t      tag;
    out_t      res;
}

struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    peek_t p;
    state start {
        pkt.extract(hdr.ethernet);
        p = pkt.lookahead<peek_t>();
        transition select(p.kind) {
            2: tagged;
            default: accept;
        }
    }
    state tagged {
        pkt.extract(hdr.tag);
        hdr.res.setValid();
        hdr.res.version = (bit<8>)p.version;
        hdr.res.kind = (bit<8>)p.kind;
        hdr.res.flag = p.urgent ? 8w0xaa : 8w0x55;
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply { sm.egress_spec = 1; }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.tag);
        pkt.emit(hdr.res);
    }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
