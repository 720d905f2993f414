// A zero-width literal holds only 0 (`0w0` is bit<0>'s, P4_16 §7.1.6.2).
// expect-at: tests/errors/bad_width_literal.p4:4:18
// expect: error[P4E0104]: invalid integer literal `0w5`: value 5 does not fit in 0 bits
const bit<8> A = 0w5;
