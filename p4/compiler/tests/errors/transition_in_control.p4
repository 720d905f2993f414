// A transition in a control.
// expect-at: tests/errors/transition_in_control.p4:7:9
// expect: error[P4E0114]: `transition` is only allowed as the last statement of a parser state
#include <core.p4>
control C(inout bit<8> x) {
    apply {
        transition accept;
    }
}
