// A variable of a type that was never declared.
// expect-at: tests/errors/undeclared_type.p4:7:16
// expect: error[P4E0110]: expected `=` or a call after this expression, found `f`
#include <core.p4>
control C(inout bit<8> x) {
    apply {
        flow_t f;
    }
}
