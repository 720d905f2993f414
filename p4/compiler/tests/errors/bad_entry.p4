// A const entry without its action.
// expect-at: tests/errors/bad_entry.p4:11:17
// expect: error[P4E0110]: expected an action name, found `;`
#include <core.p4>
control C(inout bit<8> x) {
    action a() { }
    table t {
        key = { x : exact; }
        actions = { a; }
        const entries = {
            1 : ;
        }
    }
    apply { t.apply(); }
}
