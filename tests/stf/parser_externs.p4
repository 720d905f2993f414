// Extern objects declared in a parser and used from its states (P4_16
// §12.13, v1model register/counter), and a top-level register the parser
// and the ingress share as one object.
//
// The parser's `seen` register counts packets in cell 0; the first packet
// (count 0) takes state `first` and goes to port 1, later ones take
// `later` and go to port 2. Each packet carries the count it saw and the
// value the previous packet's ingress left in the top-level `last_kind`.
// The parser's `parsed` counter counts packets in cell `kind`.
#include <core.p4>
#include <v1model.p4>

header data_t {
    bit<8>  kind;
    bit<32> seen;
    bit<8>  prev_kind;
}

struct headers_t {
    data_t d;
}

struct meta_t {
    bit<9> port;
}

register<bit<8>>(1) last_kind;

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    register<bit<32>>(2) seen;
    counter(4, CounterType.packets) parsed;
    bit<32> n;

    state start {
        pkt.extract(h.d);
        seen.read(n, 0);
        seen.write(0, n + 1);
        h.d.seen = n;
        last_kind.read(h.d.prev_kind, 0);
        parsed.count((bit<32>)h.d.kind);
        transition select(n) {
            0: first;
            default: later;
        }
    }
    state first {
        m.port = 1;
        transition accept;
    }
    state later {
        m.port = 2;
        transition accept;
    }
}

control MyIngress(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = m.port;
        last_kind.write(0, h.d.kind);
    }
}

control MyEgress(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply {} }
control Vrfy(inout headers_t h, inout meta_t m) { apply {} }
control Upd(inout headers_t h, inout meta_t m) { apply {} }
control Dep(packet_out pkt, in headers_t h) { apply { pkt.emit(h); } }

V1Switch(P(), Vrfy(), MyIngress(), MyEgress(), Upd(), Dep()) main;
