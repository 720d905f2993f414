// A misspelt #include.
// expect-at: tests/errors/unknown_directive.p4:4:2
// expect: error[P4E0001]: unknown preprocessor directive `#incude`
#incude <core.p4>
