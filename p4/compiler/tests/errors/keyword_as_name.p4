// `table` is a keyword, not a field name.
// expect-at: tests/errors/keyword_as_name.p4:5:12
// expect: error[P4E0110]: expected a field name, found keyword `table`
header h_t {
    bit<8> table;
}
