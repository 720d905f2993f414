// #error stops compilation.
// expect-at: tests/errors/error_directive.p4:5:1
// expect: error[P4E0006]: #error "TARGET must be defined"
#ifndef TARGET
#error "TARGET must be defined"
#endif
