// An #if expression cut short.
// expect-at: tests/errors/bad_if_expression.p4:4:1
// expect: error[P4E0004]: invalid #if expression: expected a value
#if 1 +
#endif
