// `lookahead<T>()` (P4_16 §12.8.3) of a struct holding a struct, and of a
// tuple holding a tuple: the next bits of the packet, laid out as a header
// of those fields would be (first field in the first bits), without
// moving the cursor.
#include <core.p4>
#include <v1model.p4>

struct inner_t {
    bit<4> hi;
    bool   flag;
    bit<3> lo;
}

struct outer_t {
    bit<8>  kind;
    inner_t inner;
    bit<16> tag;
}

header h_t {
    bit<8>  kind;
    bit<8>  inner;
    bit<16> tag;
}

header out_t {
    bit<8>  kind;
    bit<8>  hi;
    bit<8>  flag;
    bit<8>  lo;
    bit<16> tag;
    bit<8>  t0;
    bit<8>  t1;
    bit<8>  t2;
}

struct headers_t {
    h_t   h;
    out_t o;
}

struct meta_t {
    outer_t seen;
    bit<8>  t0;
    bit<8>  t1;
    bit<8>  t2;
}

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        meta.seen = pkt.lookahead<outer_t>();
        tuple<bit<8>, tuple<bit<4>, bit<4>>> t =
            pkt.lookahead<tuple<bit<8>, tuple<bit<4>, bit<4>>>>();
        meta.t0 = t[0];
        meta.t1 = (bit<8>)t[1][0];
        meta.t2 = (bit<8>)t[1][1];
        transition select(meta.seen.inner.flag) {
            true: parse_h;
            false: accept;
        }
    }
    state parse_h {
        pkt.extract(hdr.h);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.o.setValid();
        hdr.o.kind = meta.seen.kind;
        hdr.o.hi = (bit<8>)meta.seen.inner.hi;
        hdr.o.flag = meta.seen.inner.flag ? 8w1 : 8w0;
        hdr.o.lo = (bit<8>)meta.seen.inner.lo;
        hdr.o.tag = meta.seen.tag;
        hdr.o.t0 = meta.t0;
        hdr.o.t1 = meta.t1;
        hdr.o.t2 = meta.t2;
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.h);
        pkt.emit(hdr.o);
    }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(),
         MyDeparser()) main;
