// `bit<>` has no width.
// expect-at: tests/errors/empty_width.p4:4:18
// expect: error[P4E0110]: expected a width (an integer, a constant or a parenthesised expression), found `>`
header h_t { bit<> f; }
