// A block comment that never ends.
// expect-at: tests/errors/unterminated_comment.p4:5:1
// expect: error[P4E0102]: unterminated block comment
header h_t { bit<8> f; }
/* this comment
   runs to the end of the file
