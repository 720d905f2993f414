// `transition` needs a state name or select.
// expect-at: tests/errors/invalid_transition.p4:7:20
// expect: error[P4E0114]: expected a state name or `select` after `transition`, found `5`
#include <core.p4>
parser P(packet_in pkt) {
    state start {
        transition 5;
    }
}
