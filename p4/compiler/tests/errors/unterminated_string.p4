// A string literal that runs to the end of the line.
// expect-at: tests/errors/unterminated_string.p4:5:7
// expect: error[P4E0103]: unterminated string literal
#include <core.p4>
@name("ingress.a)
action a() { }
