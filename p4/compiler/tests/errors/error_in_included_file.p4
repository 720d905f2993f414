// The syntax error is inside the included file.
// expect-at: tests/errors/include/bad_header.p4:4:13
// expect: error[P4E0110]: expected `;` after the field, found `bit`
#include <core.p4>
#include "include/bad_header.p4"
struct s_t { ethernet_t e; }
