/* Tables with const entries: priorities, ranges, masks, tuples,
 * don't-cares and defaults. */
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<16> b; bit<32> c; }
struct hs { h_t h; }
struct m { bit<8> result; }

parser Pr(packet_in p, out hs hdr, inout m meta, inout standard_metadata_t sm) {
    state start { p.extract(hdr.h); transition accept; }
}

control Ig(inout hs hdr, inout m meta, inout standard_metadata_t sm) {
    action set(bit<8> v) { meta.result = v; }
    action nop() { }

    table classify {
        key = {
            hdr.h.a : ternary;
            hdr.h.b : range;
            hdr.h.c : lpm;
        }
        actions = { set; nop; }
        const default_action = nop();
        largest_priority_wins = false;
        priority_delta = 10;
        const entries = {
            (0x01 &&& 0x0F, 1 .. 100, 0x0A000000 &&& 0xFF000000) : set(1);
            priority = 5 : (_, 200 .. 300, _) : set(2);
            @priority(7) (8w2, _, 32w0x0B000000 &&& 32w0xFF000000) : set(3);
            (default, default, default) : nop();
            (0x10, 16w5 .. 16w9, _) : set(4);
        }
    }

    table exact_entries {
        key = { hdr.h.a : exact; hdr.h.b : exact; }
        actions = { set; nop; }
        entries = {
            const (1, 2) : set(10);
            (3, 4) : set(11);
            priority = (1 + 2) : (5, 6) : nop();
        }
        default_action = set(0);
    }

    apply {
        classify.apply();
        exact_entries.apply();
    }
}

control Nv(inout hs hdr, inout m meta) { apply {} }
control Ne(inout hs hdr, inout m meta, inout standard_metadata_t sm) { apply {} }
control Dp(packet_out p, in hs hdr) { apply { p.emit(hdr.h); } }

V1Switch(Pr(), Nv(), Ig(), Ne(), Nv(), Dp()) main;
