// A key element without its match kind.
// expect-at: tests/errors/bad_key_element.p4:7:18
// expect: error[P4E0110]: expected `:`, found `;`
#include <core.p4>
control C(inout bit<8> x) {
    table t {
        key = { x; }
        actions = { NoAction; }
    }
    apply { t.apply(); }
}
