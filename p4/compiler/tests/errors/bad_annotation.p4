// An annotation whose body is closed with the wrong bracket.
// expect-at: tests/errors/bad_annotation.p4:5:18
// expect: error[P4E0113]: mismatched `]` in annotation `@name`
#include <core.p4>
@name("ingress.x"]
action a() { }
