// Slices as `out`/`inout` arguments (P4_16 §6.8, p4c's issue2498 sample):
// the slice is copied in, and copied back into its bits of the base, the
// other bits unchanged. An action, a function and a sub-control each get
// one.
#include <core.p4>
#include <v1model.p4>

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
        pkt.extract(hdr.data);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

void put_five(out bit<4> o) {
    o = 5;
}

control Flip(inout bit<1> x) {
    apply { x = ~x; }
}

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    Flip() flip;
    action bump(inout bit<4> x) {
        x = x + 1;
    }
    apply {
        bump(hdr.data.a[3:0]);
        put_five(hdr.data.a[7:4]);
        flip.apply(hdr.data.b[0:0]);
        flip.apply(hdr.data.b[7:7]);
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
