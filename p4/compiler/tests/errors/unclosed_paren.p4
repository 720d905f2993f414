// The if condition is never closed.
// expect-at: tests/errors/unclosed_paren.p4:7:20
// expect: error[P4E0110]: expected `)`, found `{`
#include <core.p4>
control C(inout bit<8> x) {
    apply {
        if (x == 1 {
            x = 2;
        }
    }
}
