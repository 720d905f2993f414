// A program that picks no V1MODEL_VERSION gets v1model 20180101, as with
// p4c, which declares no PortId_t: the program may declare its own (here a
// struct, compared with a struct constant) and index a register with bit<32>.
#include <core.p4>
#include <v1model.p4>

struct PortId_t { bit<9> v; }

const PortId_t SPECIAL = { 9w5 };

header h_t {
    bit<8> port;
    bit<8> seen;
}

struct headers_t { h_t h; }

struct meta_t { PortId_t p; }

parser prs(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition accept;
    }
}

control vrf(inout headers_t hdr, inout meta_t m) { apply { } }

control ing(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    register<bit<8>>(4) last;
    apply {
        m.p.v = (bit<9>)hdr.h.port;
        if (m.p == SPECIAL) {
            sm.egress_spec = 1;
        } else {
            sm.egress_spec = m.p.v;
        }
        bit<8> prev;
        last.read(prev, 32w0);
        hdr.h.seen = prev;
        last.write(32w0, hdr.h.port);
        hdr.h.port = (bit<8>)(__v1model_version - 20180000);
    }
}

control egr(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control upd(inout headers_t hdr, inout meta_t m) { apply { } }
control dep(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(prs(), vrf(), ing(), egr(), upd(), dep()) main;
