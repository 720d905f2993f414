// A select case without its `:`.
// expect-at: tests/errors/bad_select_case.p4:10:19
// expect: error[P4E0110]: expected `:`, found `accept`
#include <core.p4>
header h_t { bit<16> t; }
parser P(packet_in pkt, out h_t h) {
    state start {
        pkt.extract(h);
        transition select(h.t) {
            0x800 accept;
            default: reject;
        }
    }
}
