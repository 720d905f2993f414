// Header stacks of varbit headers (p4c's equality-bmv2 sample): each
// element is extracted with its own length (`extract(s.next, bits)`), the
// stack is deparsed element by element, and `==` on stacks compares their
// elements (P4_16 §8.18), varbit fields by length and bytes.
#include <core.p4>
#include <v1model.p4>

header opt_t {
    bit<8>     len;
    varbit<32> data;
}

header result_t {
    bit<8> same;
}

struct headers_t {
    result_t result;
    opt_t[2] opts;
}

struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        bit<32> n = (bit<32>)pkt.lookahead<bit<8>>();
        pkt.extract(hdr.opts.next, n * 8);
        transition select(hdr.opts.lastIndex) {
            0: start;
            default: accept;
        }
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply {
        opt_t[2] swapped;
        swapped[0] = hdr.opts[1];
        swapped[1] = hdr.opts[0];
        hdr.result.setValid();
        hdr.result.same = 0;
        if (swapped == hdr.opts) {
            hdr.result.same = hdr.result.same | 1;
        }
        if (hdr.opts[0] == hdr.opts[1]) {
            hdr.result.same = hdr.result.same | 2;
        }
        sm.egress_spec = 1;
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.result);
        pkt.emit(hdr.opts);
    }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(),
         MyDeparser()) main;
