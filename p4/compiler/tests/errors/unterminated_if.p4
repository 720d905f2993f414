// #ifdef without #endif.
// expect-at: tests/errors/unterminated_if.p4:4:1
// expect: error[P4E0003]: unterminated conditional directive
#ifdef FOO
const bit<8> A = 1;
