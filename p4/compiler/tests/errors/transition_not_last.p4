// Nothing may follow the transition in a state.
// expect-at: tests/errors/transition_not_last.p4:9:9
// expect: error[P4E0114]: the transition must be the last statement of state `start`, found `pkt`
#include <core.p4>
header h_t { bit<8> f; }
parser P(packet_in pkt, out h_t h) {
    state start {
        transition accept;
        pkt.extract(h);
    }
}
