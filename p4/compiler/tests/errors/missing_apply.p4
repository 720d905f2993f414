// A control without an apply block.
// expect-at: tests/errors/missing_apply.p4:5:9
// expect: error[P4E0115]: control `C` has no `apply` block
#include <core.p4>
control C(inout bit<8> x) {
    action a() { x = 1; }
}
