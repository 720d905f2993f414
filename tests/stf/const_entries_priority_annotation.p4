// p4c's `@priority(N)` annotation on `const entries` (its
// table-entries-priority-bmv2 sample): p4c hands the number to BMv2 as
// is, an entry without one gets its position (1, 2, ..) and the smallest
// number wins, whatever the source order.
#include <core.p4>
#include <v1model.p4>

header data_t {
    bit<8> a;
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
        key = { hdr.data.a : ternary; }
        actions = { set_r; }
        const default_action = set_r(0xff);
        const entries = {
            0x10 &&& 0xf0 : set_r(1) @priority(3);
            0x12          : set_r(2);
            0x02 &&& 0x0f : set_r(3) @priority(1);
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
