// #endif closes nothing.
// expect-at: tests/errors/endif_without_if.p4:5:2
// expect: error[P4E0003]: #endif without #if
#define X 1
#endif
