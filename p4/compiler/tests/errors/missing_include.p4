// The included file does not exist.
// expect-at: tests/errors/missing_include.p4:4:1
// expect: error[P4E0002]: cannot find include file `no_such_file.p4`
#include "no_such_file.p4"
