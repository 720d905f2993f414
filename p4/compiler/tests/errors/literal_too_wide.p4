// 256 does not fit in 8 bits.
// expect-at: tests/errors/literal_too_wide.p4:4:18
// expect: error[P4E0104]: invalid integer literal `8w256`: value 256 does not fit in 8 bits
const bit<8> A = 8w256;
