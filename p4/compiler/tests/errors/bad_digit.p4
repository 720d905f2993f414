// `2` is not a binary digit.
// expect-at: tests/errors/bad_digit.p4:4:18
// expect: error[P4E0104]: invalid integer literal `0b102`: `2` is not a base-2 digit
const bit<8> A = 0b102;
