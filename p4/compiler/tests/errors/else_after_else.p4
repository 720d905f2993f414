// Two #else branches.
// expect-at: tests/errors/else_after_else.p4:6:2
// expect: error[P4E0003]: #else after #else
#if 1
#else
#else
#endif
