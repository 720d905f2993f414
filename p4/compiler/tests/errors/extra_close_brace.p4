// One `}` too many.
// expect-at: tests/errors/extra_close_brace.p4:5:1
// expect: error[P4E0110]: unexpected `}` at top level
header h_t { bit<8> f; }
}
struct s_t { h_t h; }
