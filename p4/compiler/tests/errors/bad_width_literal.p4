// A zero-width literal.
// expect-at: tests/errors/bad_width_literal.p4:4:18
// expect: error[P4E0104]: invalid integer literal `0w5`: width must be at least 1
const bit<8> A = 0w5;
