// A compound assignment evaluates its left side once (P4_16 v1.2.5
// §12.4: `a op= b` is `a = a op b` with `a` evaluated only once; p4c's
// opassign2-bmv2): a stack index that calls a function with a side effect
// calls it once, and the element read is the element written.
#include <core.p4>
#include <v1model.p4>

header idx_t {
    bit<8> i;
}

header val_t {
    bit<8> v;
}

struct headers_t {
    idx_t    idx;
    val_t[4] vals;
}

struct meta_t { }

// Returns i and moves it on by one (a post-increment).
bit<8> next(inout bit<8> i) {
    bit<8> was = i;
    i = i + 1;
    return was;
}

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.idx);
        pkt.extract(hdr.vals.next);
        pkt.extract(hdr.vals.next);
        pkt.extract(hdr.vals.next);
        pkt.extract(hdr.vals.next);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.vals[next(hdr.idx.i) & 3].v += 0x10;
        hdr.vals[next(hdr.idx.i) & 3].v |= 0x80;
        hdr.vals[next(hdr.idx.i) & 3].v[3:0] -= 1;
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.idx);
        pkt.emit(hdr.vals);
    }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(),
         MyDeparser()) main;
