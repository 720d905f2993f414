// `$` is not P4.
// expect-at: tests/errors/unexpected_char.p4:4:18
// expect: error[P4E0101]: unexpected character `$`
const bit<8> A = $1;
