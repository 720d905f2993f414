// A constant declaration without its `;`.
// expect-at: tests/errors/missing_semicolon.p4:5:18
// expect: error[P4E0110]: expected `;` after the constant declaration, found `const`
#include <core.p4>
const bit<8> A = 1
const bit<8> B = 2;
