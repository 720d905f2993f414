// `@` must be followed directly by the annotation name.
// expect-at: tests/errors/annotation_without_name.p4:5:1
// expect: error[P4E0113]: expected an annotation name after `@`, found `(`
#include <core.p4>
@ (1)
action a() { }
