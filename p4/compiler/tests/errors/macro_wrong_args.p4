// A function-like macro called with too few arguments.
// expect-at: tests/errors/macro_wrong_args.p4:5:18
// expect: error[P4E0007]: macro `ADD` takes 2 argument(s) but 1 were given
#define ADD(a, b) ((a) + (b))
const bit<8> A = ADD(1);
