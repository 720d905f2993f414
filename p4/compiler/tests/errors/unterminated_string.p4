// A string literal never closed: it runs (over newlines, P4_16 §6.4.3.3) to the end of the file.
// expect-at: tests/errors/unterminated_string.p4:5:7
// expect: error[P4E0103]: unterminated string literal
#include <core.p4>
@name("ingress.a)
action a() { }
