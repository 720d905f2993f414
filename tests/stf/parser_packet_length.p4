// `packet_in.length()` in a parser (P4_16 core.p4: the whole packet's length
// in bytes): read before and after an extract it is the same, and a select
// on it picks the state. Short packets (at most 4 bytes) go to port 1,
// longer ones to port 2; both get the length written into the header.
#include <core.p4>
#include <v1model.p4>

header data_t {
    bit<8>  kind;
    bit<16> before;
    bit<16> after;
}

struct headers_t {
    data_t d;
}

struct meta_t {
    bit<9> port;
}

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    bit<32> len;
    state start {
        len = pkt.length();
        pkt.extract(h.d);
        h.d.before = (bit<16>)len;
        h.d.after = (bit<16>)pkt.length();
        transition select(pkt.length()) {
            0 .. 5: short;
            default: long;
        }
    }
    state short {
        m.port = 1;
        transition accept;
    }
    state long {
        m.port = 2;
        transition accept;
    }
}

control MyIngress(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = m.port;
    }
}

control MyEgress(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply {} }
control Vrfy(inout headers_t h, inout meta_t m) { apply {} }
control Upd(inout headers_t h, inout meta_t m) { apply {} }
control Dep(packet_out pkt, in headers_t h) { apply { pkt.emit(h); } }

V1Switch(P(), Vrfy(), MyIngress(), MyEgress(), Upd(), Dep()) main;
