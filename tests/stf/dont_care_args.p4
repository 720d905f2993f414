// `_` as an `out` argument (P4_16 §6.8.3, p4c's issue774-4 sample): the
// callee writes into a hidden local that is dropped. The parser skips a
// two-byte tag with `extract<tag_t>(_)`, so only `data` is deparsed;
// ingress passes `_` to an action's and a function's `out` parameter,
// whose other effects still happen.
#include <core.p4>
#include <v1model.p4>

header tag_t {
    bit<16> v;
}

header data_t {
    bit<8> a;
    bit<8> b;
}

struct headers_t {
    data_t data;
}

struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract<tag_t>(_);
        pkt.extract(hdr.data);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

bit<8> twice(out bit<8> copy, in bit<8> x) {
    copy = x;
    return x + x;
}

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    action bump(in bit<8> x, out bit<8> old) {
        old = hdr.data.b;
        hdr.data.b = x + 1;
    }
    apply {
        bump(hdr.data.a, _);
        hdr.data.a = twice(_, hdr.data.a);
        sm.egress_spec = 1;
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.data); }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(),
         MyDeparser()) main;
