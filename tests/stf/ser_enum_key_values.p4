// Entries of a table keyed on a serializable enum take enum members and
// values of the enum's underlying type, masks included (`(bit<8>)Kind.B
// &&& 0xf0`, as in p4c's table-entries-ser-enum-bmv2 sample).
#include <core.p4>
#include <v1model.p4>

enum bit<8> Kind {
    A = 0x01,
    B = 0x80
}

header data_t {
    Kind   k;
    bit<8> r;
}

struct headers_t {
    data_t data;
}

struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.data);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    action set_r(bit<8> v) {
        hdr.data.r = v;
    }
    table t {
        key = { hdr.data.k : ternary; }
        actions = { set_r; }
        const default_action = set_r(0xff);
        const entries = {
            Kind.A                       : set_r(1);
            ((bit<8>)Kind.B) &&& 0xf0    : set_r(2);
        }
    }
    apply {
        t.apply();
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
