// The left side of `=` is evaluated before the right (P4_16 §8, §12.1):
// the stack index `pick(idx)` is taken before `bump` increments `idx`, so
// the element written is the one the old `idx` names.
#include <core.p4>
#include <v1model.p4>

header i_t {
    bit<8> idx;
}

header e_t {
    bit<8> a;
}

struct headers_t {
    i_t    i;
    e_t[2] e;
}

struct meta_t { }

bit<8> pick(in bit<8> x) {
    return x;
}

bit<8> bump(inout bit<8> x) {
    x = x + 1;
    return 0x77;
}

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.i);
        pkt.extract(hdr.e.next);
        pkt.extract(hdr.e.next);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply {
        hdr.e[pick(hdr.i.idx)].a = bump(hdr.i.idx);
        sm.egress_spec = 1;
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.i);
        pkt.emit(hdr.e);
    }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
