// The control body is never closed.
// expect-at: tests/errors/unbalanced_braces.p4:5:27
// expect: error[P4E0111]: unclosed `{`
#include <core.p4>
control C(inout bit<8> x) {
    apply {
        x = 1;
    }
