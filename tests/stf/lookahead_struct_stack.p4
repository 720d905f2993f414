// `lookahead<S>()` of a struct holding a header stack and a header besides
// scalars (P4_16 §12.8.3; p4c's issue2465-bmv2): the value is laid out as
// `extract` would read it, member after member, the headers valid, and the
// packet is not consumed.
#include <core.p4>
#include <v1model.p4>

header tag_t {
    bit<8> v;
}

header eth_t {
    bit<16> t;
}

struct peek_t {
    bit<4>   hi;
    bit<4>   lo;
    tag_t[2] tags;
    eth_t    e;
}

header first_t {
    bit<8> v;
}

header res_t {
    bit<8>  hi;
    bit<8>  lo;
    bit<8>  t0;
    bit<16> e;
    bit<8>  valid;
}

struct headers_t {
    first_t  first;
    tag_t[2] tags;
    eth_t    e;
    res_t    res;
}

struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        peek_t p = pkt.lookahead<peek_t>();
        hdr.res.setValid();
        hdr.res.hi = (bit<8>)p.hi;
        hdr.res.lo = (bit<8>)p.lo;
        hdr.res.t0 = p.tags[0].v;
        hdr.res.e = p.e.t;
        hdr.res.valid = p.tags[1].isValid() && p.e.isValid() ? 8w1 : 8w0;
        transition select(p.tags[1].v) {
            0x22: take;
            default: accept;
        }
    }
    state take {
        pkt.extract(hdr.first);
        pkt.extract(hdr.tags.next);
        pkt.extract(hdr.tags.next);
        pkt.extract(hdr.e);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.first);
        pkt.emit(hdr.tags);
        pkt.emit(hdr.e);
        pkt.emit(hdr.res);
    }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(),
         MyDeparser()) main;
