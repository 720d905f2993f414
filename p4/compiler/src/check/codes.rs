//! Stable diagnostic codes of the checker (`P4E1xxx`).
//!
//! Contract: a code, once published, keeps its meaning; tests pin rendered
//! diagnostics, so changing a code is a visible change.

/// A name is not declared in any enclosing scope.
pub const UNKNOWN_NAME: &str = "P4E1001";
/// A name is declared twice in the same scope.
pub const DUPLICATE: &str = "P4E1002";
/// A name refers to the wrong kind of thing (a value where a type is needed...).
pub const WRONG_KIND: &str = "P4E1003";
/// Operand or argument types do not agree.
pub const TYPE_MISMATCH: &str = "P4E1010";
/// Bit widths do not agree.
pub const WIDTH_MISMATCH: &str = "P4E1011";
/// A width is larger than [`super::MAX_WIDTH`] bits (or a literal's is 0).
pub const BAD_WIDTH: &str = "P4E1012";
/// A compile-time constant is required.
pub const NOT_CONSTANT: &str = "P4E1013";
/// A constant does not fit its type.
pub const OVERFLOW: &str = "P4E1014";
/// A function with a result may end without returning one.
pub const MISSING_RETURN: &str = "P4E1015";
/// Wrong number of arguments.
pub const ARG_COUNT: &str = "P4E1020";
/// Not assignable: a constant, an `in` parameter or not an l-value.
pub const NOT_LVALUE: &str = "P4E1021";
/// No such field.
pub const UNKNOWN_FIELD: &str = "P4E1022";
/// No such method, or a method used without calling it.
pub const UNKNOWN_METHOD: &str = "P4E1023";
/// An unknown or misplaced match kind.
pub const BAD_MATCH_KIND: &str = "P4E1030";
/// A table names an action it cannot run.
pub const BAD_ACTION_REF: &str = "P4E1031";
/// A bad `default_action`.
pub const BAD_DEFAULT_ACTION: &str = "P4E1032";
/// A bad table entry.
pub const BAD_ENTRY: &str = "P4E1033";
/// A bad table property.
pub const BAD_TABLE_PROPERTY: &str = "P4E1034";
/// Parser graph problems: unknown state, missing `start`.
pub const BAD_STATE: &str = "P4E1040";
/// A `select` case does not fit its keys.
pub const BAD_SELECT: &str = "P4E1041";
/// Something is called where it may not be (a table in a parser...).
pub const NOT_ALLOWED_HERE: &str = "P4E1042";
/// The `main` package instantiation is missing or wrong.
pub const BAD_MAIN: &str = "P4E1050";
/// A feature the compiler does not implement yet.
pub const UNSUPPORTED: &str = "P4E1060";
/// An unused or ignored construct (warning).
pub const IGNORED: &str = "P4E1070";
/// `static_assert` with a false condition.
pub const STATIC_ASSERT: &str = "P4E1080";
