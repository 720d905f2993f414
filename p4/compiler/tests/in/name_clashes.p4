/* P4 names that collide with Rust keywords or with the names generated
 * code uses for itself; the program only has to compile and run. */
#include <core.p4>
#include <v1model.p4>

header Packet { bit<8> type; bit<8> match; bit<8> self; bit<8> valid; }
struct Env { Packet pkt; }
struct Exit { bit<8> l; }
// Constants become `pub const`s in SCREAMING_SNAKE_CASE, and the object
// index modules (`tables`, ...) take precedence over a type of that name.
const bit<8> camelStep = 4;
const int<8> NEG = -2;
const bool ON = true;
const int BIG = 300;
struct tables { bit<8> x; }

parser P(packet_in packet, out Env key, inout Exit state, inout standard_metadata_t p) {
    state start {
        bit<8> rt = 1;
        packet.extract(key.pkt);
        transition accept;
    }
}

control VC(inout Env key, inout Exit r) { apply { } }

control I(inout Env key, inout Exit r, inout standard_metadata_t p) {
    bit<8> env = 2;
    action c(bit<8> n, bit<9> l) { key.pkt.type = n + env; p.egress_spec = l; }
    table hit {
        key = { key.pkt.match: exact; }
        actions = { c; }
        default_action = c(5, 3);
    }
    apply {
        bit<8> tmp__ = 1;
        bit<8> aid = tmp__;
        // Same Rust name as `camelStep`'s constant: the local is renamed.
        bit<8> CAMEL_STEP = camelStep + 5;
        tables t = { CAMEL_STEP };
        hit.apply();
        key.pkt.self = key.pkt.self + aid;
        if (ON && NEG < 0 && BIG > 255) {
            key.pkt.valid = t.x;
        }
    }
}

control E(inout Env key, inout Exit r, inout standard_metadata_t p) { apply { } }
control CC(inout Env key, inout Exit r) { apply { } }
control D(packet_out packet, in Env key) { apply { packet.emit(key.pkt); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
