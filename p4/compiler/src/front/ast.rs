//! The P4_16 abstract syntax tree produced by [`crate::front::parser`].
//!
//! What it is for: a faithful, lossless-enough picture of a P4_16 program as
//! written (after preprocessing), for the checker (`check/`) to resolve names
//! and types on. Nothing here is resolved or typed: a [`TypeKind::Named`] may
//! name a header, a typedef or a type parameter; an [`ExprKind::Member`] may be
//! a field access, an enum member (`E.A`), `error.NoMatch` or a method
//! (`hdr.ipv4.isValid`); a call's callee is an arbitrary expression.
//!
//! Contract:
//! - Every node carries a [`Span`]: a [`FileId`] plus a byte range in that
//!   (original, unexpanded) file. Tokens that came out of a macro expansion
//!   carry the span of the macro use.
//! - Declarations keep source order; the checker relies on it (P4 requires
//!   declaration before use, P4_16 §6.5).
//! - Every declaration, parameter, field, table property, key element, action
//!   reference and table entry carries its [`Annotation`]s (P4_16 §18).
//! - Integer literals are decoded into [`IntLit`] (value, width, signedness);
//!   values that do not fit in `u128` are rejected by the parser.
//! - The AST owns all its strings; nothing borrows the source text.
//!
//! Grammar reference: P4_16 language specification v1.2.4, Appendix H
//! ("P4 grammar"); section numbers below refer to that document.

pub use crate::diag::{FileId, Span};

/// An identifier with its span.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ident {
    /// The name as written.
    pub name: String,
    /// Where it was written.
    pub span: Span,
}

/// A possibly dot-prefixed name (`.foo` means "look up `foo` at top level",
/// P4_16 §6.5.1.1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathName {
    /// `true` for `.foo`.
    pub top_level: bool,
    /// The name.
    pub ident: Ident,
    /// Span including the leading dot.
    pub span: Span,
}

/// A whole program: the declarations of the expanded source (includes
/// first), in order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Program {
    /// Top-level declarations in source order.
    pub decls: Vec<Decl>,
}

// ---------------------------------------------------------------------------
// Annotations (P4_16 §18)
// ---------------------------------------------------------------------------

/// An annotation: `@name`, `@name(tokens)` or `@name[structured]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Annotation {
    /// The annotation name without `@` (`name`, `id`, `defaultonly`...).
    pub name: Ident,
    /// Its body.
    pub body: AnnotationBody,
    /// Span from `@` to the closing bracket.
    pub span: Span,
}

/// The body of an [`Annotation`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AnnotationBody {
    /// `@hidden`: no body at all.
    Empty,
    /// `@name(...)`: an unstructured body (P4_16 §18.1). `raw` is the source
    /// text between the parentheses exactly as written (after macro
    /// expansion); `exprs` is the body parsed as a comma-separated expression
    /// list when that parse succeeds (`@name("x")` → one string literal,
    /// `@id(1)`, `@priority(3)`, `@field_list(1)`), `None` when the body is
    /// arbitrary tokens (`@pragma ...`-style).
    Unstructured {
        /// Body text between the parentheses.
        raw: String,
        /// The body as an expression list, if it parses as one.
        exprs: Option<Vec<Expr>>,
    },
    /// `@name[...]`: a structured body (P4_16 §18.2): either an expression
    /// list or a `key = value` list.
    Structured {
        /// Body text between the brackets.
        raw: String,
        /// Expression list form (`@a[1, "x"]`); empty for the kv form.
        exprs: Vec<Expr>,
        /// Key-value form (`@a[k = 1, j = "x"]`); empty for the list form.
        kvs: Vec<NamedExpr>,
    },
}

impl Annotation {
    /// The single string argument of `@name("x")`-style annotations.
    pub fn string_arg(&self) -> Option<&str> {
        match &self.body {
            AnnotationBody::Unstructured {
                exprs: Some(exprs), ..
            } if exprs.len() == 1 => match &exprs[0].kind {
                ExprKind::Str(s) => Some(s),
                _ => None,
            },
            _ => None,
        }
    }

    /// The single integer argument of `@id(1)`-style annotations.
    pub fn int_arg(&self) -> Option<&IntLit> {
        match &self.body {
            AnnotationBody::Unstructured {
                exprs: Some(exprs), ..
            } if exprs.len() == 1 => match &exprs[0].kind {
                ExprKind::Int(i) => Some(i),
                _ => None,
            },
            _ => None,
        }
    }
}

/// Finds the first annotation called `name` in a list.
pub fn find_annotation<'a>(annotations: &'a [Annotation], name: &str) -> Option<&'a Annotation> {
    annotations.iter().find(|a| a.name.name == name)
}

// ---------------------------------------------------------------------------
// Declarations (P4_16 §7, §8, §12, §13, §14)
// ---------------------------------------------------------------------------

/// A declaration: top-level, or a local of a parser or control.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decl {
    /// `const T x = e;`
    Const(ConstDecl),
    /// `T x;` / `T x = e;` (locals only in valid programs).
    Var(VarDecl),
    /// `typedef T X;` / `type T X;`
    Typedef(TypedefDecl),
    /// `header H { ... }`
    Header(StructLikeDecl),
    /// `header_union U { ... }`
    HeaderUnion(StructLikeDecl),
    /// `struct S { ... }`
    Struct(StructLikeDecl),
    /// `enum E { A, B }` / `enum bit<8> E { A = 1 }`
    Enum(EnumDecl),
    /// `error { A, B }` (extends the single `error` type).
    Error(NameListDecl),
    /// `match_kind { a, b }` (extends the single `match_kind` type).
    MatchKind(NameListDecl),
    /// `extern X<T> { ... }`
    Extern(ExternDecl),
    /// `extern R f<T>(params);`
    ExternFunction(FunctionPrototype),
    /// `parser P<T>(params);` (a parser type).
    ParserType(TypeDeclSignature),
    /// `control C<T>(params);` (a control type).
    ControlType(TypeDeclSignature),
    /// `package P<T>(params);`
    Package(TypeDeclSignature),
    /// A parser with a body.
    Parser(ParserDecl),
    /// A control with a body.
    Control(ControlDecl),
    /// `action a(params) { ... }`
    Action(ActionDecl),
    /// `R f<T>(params) { ... }`
    Function(FunctionDecl),
    /// `T(args) name;`
    Instantiation(Instantiation),
    /// `value_set<T>(size) name;` (parser locals only).
    ValueSet(ValueSetDecl),
    /// `table t { ... }` (control locals only).
    Table(TableDecl),
}

impl Decl {
    /// The declared name, if the declaration has one (`error` and
    /// `match_kind` declarations do not).
    pub fn name(&self) -> Option<&Ident> {
        Some(match self {
            Decl::Const(d) => &d.name,
            Decl::Var(d) => &d.name,
            Decl::Typedef(d) => &d.name,
            Decl::Header(d) | Decl::HeaderUnion(d) | Decl::Struct(d) => &d.name,
            Decl::Enum(d) => &d.name,
            Decl::Error(_) | Decl::MatchKind(_) => return None,
            Decl::Extern(d) => &d.name,
            Decl::ExternFunction(d) => &d.name,
            Decl::ParserType(d) | Decl::ControlType(d) | Decl::Package(d) => &d.name,
            Decl::Parser(d) => &d.signature.name,
            Decl::Control(d) => &d.signature.name,
            Decl::Action(d) => &d.name,
            Decl::Function(d) => &d.name,
            Decl::Instantiation(d) => &d.name,
            Decl::ValueSet(d) => &d.name,
            Decl::Table(d) => &d.name,
        })
    }

    /// The whole declaration's span.
    pub fn span(&self) -> Span {
        match self {
            Decl::Const(d) => d.span,
            Decl::Var(d) => d.span,
            Decl::Typedef(d) => d.span,
            Decl::Header(d) | Decl::HeaderUnion(d) | Decl::Struct(d) => d.span,
            Decl::Enum(d) => d.span,
            Decl::Error(d) | Decl::MatchKind(d) => d.span,
            Decl::Extern(d) => d.span,
            Decl::ExternFunction(d) => d.span,
            Decl::ParserType(d) | Decl::ControlType(d) | Decl::Package(d) => d.span,
            Decl::Parser(d) => d.span,
            Decl::Control(d) => d.span,
            Decl::Action(d) => d.span,
            Decl::Function(d) => d.span,
            Decl::Instantiation(d) => d.span,
            Decl::ValueSet(d) => d.span,
            Decl::Table(d) => d.span,
        }
    }

    /// The declaration's annotations.
    pub fn annotations(&self) -> &[Annotation] {
        match self {
            Decl::Const(d) => &d.annotations,
            Decl::Var(d) => &d.annotations,
            Decl::Typedef(d) => &d.annotations,
            Decl::Header(d) | Decl::HeaderUnion(d) | Decl::Struct(d) => &d.annotations,
            Decl::Enum(d) => &d.annotations,
            Decl::Error(d) | Decl::MatchKind(d) => &d.annotations,
            Decl::Extern(d) => &d.annotations,
            Decl::ExternFunction(d) => &d.annotations,
            Decl::ParserType(d) | Decl::ControlType(d) | Decl::Package(d) => &d.annotations,
            Decl::Parser(d) => &d.signature.annotations,
            Decl::Control(d) => &d.signature.annotations,
            Decl::Action(d) => &d.annotations,
            Decl::Function(d) => &d.annotations,
            Decl::Instantiation(d) => &d.annotations,
            Decl::ValueSet(d) => &d.annotations,
            Decl::Table(d) => &d.annotations,
        }
    }
}

/// `const T name = value;` (P4_16 §10.1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConstDecl {
    /// Annotations.
    pub annotations: Vec<Annotation>,
    /// Declared type.
    pub ty: Type,
    /// Name.
    pub name: Ident,
    /// Initialiser (a compile-time constant in valid programs).
    pub value: Expr,
    /// Whole declaration.
    pub span: Span,
}

/// `T name;` or `T name = init;` (P4_16 §10.2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VarDecl {
    /// Annotations.
    pub annotations: Vec<Annotation>,
    /// Declared type.
    pub ty: Type,
    /// Name.
    pub name: Ident,
    /// Optional initialiser.
    pub init: Option<Expr>,
    /// Whole declaration.
    pub span: Span,
}

/// `typedef T Name;` or `type T Name;` (P4_16 §7.5, §7.6).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypedefDecl {
    /// Annotations.
    pub annotations: Vec<Annotation>,
    /// `true` for `type` (a new nominal type), `false` for `typedef` (an alias).
    pub is_new_type: bool,
    /// The aliased type.
    pub ty: Type,
    /// The new name.
    pub name: Ident,
    /// Whole declaration.
    pub span: Span,
}

/// A `header`, `header_union` or `struct` declaration (P4_16 §7.2.2–§7.2.5).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StructLikeDecl {
    /// Annotations.
    pub annotations: Vec<Annotation>,
    /// Name.
    pub name: Ident,
    /// Generic type parameters (`struct S<T> { T f; }`, P4_16 §7.2.11).
    pub type_params: Vec<Ident>,
    /// Fields in declaration order.
    pub fields: Vec<Field>,
    /// Whole declaration.
    pub span: Span,
}

/// A field of a struct-like type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Field {
    /// Annotations (`@field_list(1)`, `@padding`...).
    pub annotations: Vec<Annotation>,
    /// Field type.
    pub ty: Type,
    /// Field name.
    pub name: Ident,
    /// From the type to the `;`.
    pub span: Span,
}

/// An `enum`, plain or serializable (P4_16 §7.2.1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EnumDecl {
    /// Annotations.
    pub annotations: Vec<Annotation>,
    /// `Some(bit<8>)` for `enum bit<8> E { ... }` (serializable enum).
    pub underlying: Option<Type>,
    /// Name.
    pub name: Ident,
    /// Members in order.
    pub members: Vec<EnumMember>,
    /// Whole declaration.
    pub span: Span,
}

/// One member of an [`EnumDecl`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EnumMember {
    /// Annotations.
    pub annotations: Vec<Annotation>,
    /// Member name.
    pub name: Ident,
    /// `= value` (serializable enums only).
    pub value: Option<Expr>,
    /// Whole member.
    pub span: Span,
}

/// `error { ... }` or `match_kind { ... }`: a list of names extending the
/// built-in type (P4_16 §7.1.2, §7.1.3). Several may appear; they accumulate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NameListDecl {
    /// Annotations.
    pub annotations: Vec<Annotation>,
    /// The members in order.
    pub members: Vec<Ident>,
    /// Whole declaration.
    pub span: Span,
}

/// A parameter direction (P4_16 §6.8).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// No direction (constructor parameters, action data).
    None,
    /// `in`.
    In,
    /// `out`.
    Out,
    /// `inout`.
    InOut,
}

/// A parameter of a parser, control, action, function, method, extern
/// constructor or package.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Param {
    /// Annotations (`@optional`...).
    pub annotations: Vec<Annotation>,
    /// Direction.
    pub direction: Direction,
    /// Type.
    pub ty: Type,
    /// Name.
    pub name: Ident,
    /// Default value (`bit<8> x = 1`), P4_16 §6.8.3.
    pub default: Option<Expr>,
    /// Whole parameter.
    pub span: Span,
}

/// The signature shared by parser/control/package types and by parser and
/// control declarations: `parser P<T>(params)` (P4_16 §12.1, §13.1, §14).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypeDeclSignature {
    /// Annotations.
    pub annotations: Vec<Annotation>,
    /// Name.
    pub name: Ident,
    /// Generic type parameters.
    pub type_params: Vec<Ident>,
    /// Runtime parameters (for a package: its constructor parameters).
    pub params: Vec<Param>,
    /// Whole declaration (for a type declaration) or the header part.
    pub span: Span,
}

/// `extern Name<T> { members }` (P4_16 §7.2.12.2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExternDecl {
    /// Annotations.
    pub annotations: Vec<Annotation>,
    /// Name.
    pub name: Ident,
    /// Generic type parameters.
    pub type_params: Vec<Ident>,
    /// Constructors and methods in order.
    pub members: Vec<ExternMember>,
    /// Whole declaration.
    pub span: Span,
}

/// A member of an [`ExternDecl`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExternMember {
    /// `Name(params);` — a constructor (the name equals the extern's).
    Constructor {
        /// Annotations.
        annotations: Vec<Annotation>,
        /// Constructor name.
        name: Ident,
        /// Constructor parameters.
        params: Vec<Param>,
        /// Whole member.
        span: Span,
    },
    /// A method; abstract when `is_abstract` (implemented by the instance's
    /// initialiser block).
    Method(FunctionPrototype),
}

/// A function or method prototype: `[abstract] R name<T>(params);`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FunctionPrototype {
    /// Annotations.
    pub annotations: Vec<Annotation>,
    /// `abstract` methods must be implemented by each instance.
    pub is_abstract: bool,
    /// Return type (`void` when none).
    pub return_type: Type,
    /// Name.
    pub name: Ident,
    /// Generic type parameters.
    pub type_params: Vec<Ident>,
    /// Parameters.
    pub params: Vec<Param>,
    /// Whole prototype.
    pub span: Span,
}

/// `R name<T>(params) { body }` (P4_16 §10.3).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FunctionDecl {
    /// Annotations.
    pub annotations: Vec<Annotation>,
    /// Return type.
    pub return_type: Type,
    /// Name.
    pub name: Ident,
    /// Generic type parameters.
    pub type_params: Vec<Ident>,
    /// Parameters.
    pub params: Vec<Param>,
    /// Body.
    pub body: Block,
    /// Whole declaration.
    pub span: Span,
}

/// `action name(params) { body }` (P4_16 §14.1). Directionless parameters
/// are action data supplied by the control plane.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ActionDecl {
    /// Annotations (`@name`, `@id`, `@defaultonly`...).
    pub annotations: Vec<Annotation>,
    /// Name.
    pub name: Ident,
    /// Parameters.
    pub params: Vec<Param>,
    /// Body.
    pub body: Block,
    /// Whole declaration.
    pub span: Span,
}

/// `Type<args>(ctor args) name [= { abstract method impls }];`
/// (P4_16 §10.3.1, §11.3).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instantiation {
    /// Annotations.
    pub annotations: Vec<Annotation>,
    /// The instantiated type with its type arguments
    /// (`register<bit<32>>` → `Named { register, [bit<32>] }`).
    pub ty: Type,
    /// Constructor arguments.
    pub args: Vec<Argument>,
    /// Instance name.
    pub name: Ident,
    /// Implementations of abstract methods, `= { ... }` (functions and
    /// nested instantiations).
    pub initializer: Option<Vec<Decl>>,
    /// Whole declaration.
    pub span: Span,
}

/// `value_set<T>(size) name;` (P4_16 §12.11).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValueSetDecl {
    /// Annotations.
    pub annotations: Vec<Annotation>,
    /// Element type (a bit type, a struct or a tuple).
    pub elem_type: Type,
    /// Maximum number of members.
    pub size: Expr,
    /// Name.
    pub name: Ident,
    /// Whole declaration.
    pub span: Span,
}

// ---------------------------------------------------------------------------
// Parsers (P4_16 §12)
// ---------------------------------------------------------------------------

/// A parser declaration with its states.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParserDecl {
    /// Name, type params, runtime params, annotations.
    pub signature: TypeDeclSignature,
    /// Constructor parameters (`parser P(...)(bit<8> c)`).
    pub ctor_params: Vec<Param>,
    /// Locals: [`Decl::Const`], [`Decl::Var`], [`Decl::Instantiation`],
    /// [`Decl::ValueSet`] (and anything else the parser accepted, for the
    /// checker to reject).
    pub locals: Vec<Decl>,
    /// States in order.
    pub states: Vec<ParserState>,
    /// Whole declaration.
    pub span: Span,
}

/// `state name { statements transition }` (P4_16 §12.4).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParserState {
    /// Annotations.
    pub annotations: Vec<Annotation>,
    /// State name.
    pub name: Ident,
    /// Statements before the transition.
    pub stmts: Vec<Stmt>,
    /// The transition; `None` when the state has none (an implicit
    /// `transition reject` — the checker may warn).
    pub transition: Option<Transition>,
    /// Whole state.
    pub span: Span,
}

/// A transition statement (P4_16 §12.5, §12.6).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Transition {
    /// `transition next;` (`accept`, `reject` or a state name).
    Direct {
        /// Target state.
        target: Ident,
        /// Whole statement.
        span: Span,
    },
    /// `transition select(exprs) { cases }`.
    Select {
        /// Selector expressions.
        exprs: Vec<Expr>,
        /// Cases in order (first match wins).
        cases: Vec<SelectCase>,
        /// Whole statement.
        span: Span,
    },
}

/// `keyset : next;` inside a select.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SelectCase {
    /// The keyset matched.
    pub keyset: Keyset,
    /// Next state.
    pub next: Ident,
    /// Whole case.
    pub span: Span,
}

/// A keyset: one element, or a parenthesised tuple of elements
/// (P4_16 §8.15). Used by `select` cases and table entries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Keyset {
    /// Elements; one for a non-tuple keyset.
    pub elems: Vec<KeysetElem>,
    /// `true` when written as a tuple `(a, b)`.
    pub is_tuple: bool,
    /// Whole keyset.
    pub span: Span,
}

/// One element of a [`Keyset`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeysetElem {
    /// A value (possibly a value-set name).
    Expr(Expr),
    /// `value &&& mask`.
    Mask {
        /// Value.
        value: Expr,
        /// Mask.
        mask: Expr,
        /// Whole element.
        span: Span,
    },
    /// `lo .. hi` (inclusive).
    Range {
        /// Low end.
        lo: Expr,
        /// High end.
        hi: Expr,
        /// Whole element.
        span: Span,
    },
    /// `default`.
    Default(Span),
    /// `_`.
    DontCare(Span),
}

// ---------------------------------------------------------------------------
// Controls and tables (P4_16 §13, §14.2)
// ---------------------------------------------------------------------------

/// A control declaration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ControlDecl {
    /// Name, type params, runtime params, annotations.
    pub signature: TypeDeclSignature,
    /// Constructor parameters.
    pub ctor_params: Vec<Param>,
    /// Locals: constants, variables, instantiations, actions, tables,
    /// functions.
    pub locals: Vec<Decl>,
    /// The `apply { ... }` block.
    pub apply: Block,
    /// Whole declaration.
    pub span: Span,
}

/// `table name { properties }`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableDecl {
    /// Annotations.
    pub annotations: Vec<Annotation>,
    /// Name.
    pub name: Ident,
    /// Properties in source order.
    pub properties: Vec<TableProperty>,
    /// Whole declaration.
    pub span: Span,
}

/// One table property (P4_16 §14.2.1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableProperty {
    /// Annotations.
    pub annotations: Vec<Annotation>,
    /// `const` prefix (`const default_action`, `const entries`).
    pub is_const: bool,
    /// What the property is.
    pub kind: TablePropertyKind,
    /// Whole property.
    pub span: Span,
}

/// The kinds of [`TableProperty`]. The well-known ones get their own
/// variant; anything else is [`TablePropertyKind::Custom`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TablePropertyKind {
    /// `key = { expr : match_kind; ... }`.
    Key(Vec<KeyElement>),
    /// `actions = { a; b(1); ... }`.
    Actions(Vec<ActionRef>),
    /// `default_action = a(args);` (the expression is a name or a call).
    DefaultAction(Expr),
    /// `size = N;`
    Size(Expr),
    /// `entries = { ... }`.
    Entries(Vec<TableEntry>),
    /// `implementation = profile;`
    Implementation(Expr),
    /// `counters = direct_counter;`
    Counters(Expr),
    /// `meters = direct_meter;`
    Meters(Expr),
    /// `support_timeout = true;`
    SupportTimeout(Expr),
    /// Any other `name = value;` (`largest_priority_wins`, `priority_delta`,
    /// `psa_*`, target-specific ones).
    Custom {
        /// Property name.
        name: Ident,
        /// Value.
        value: Expr,
    },
}

/// One key element: `expr : match_kind @annotations;`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyElement {
    /// Annotations (`@name("dst")`).
    pub annotations: Vec<Annotation>,
    /// Key expression.
    pub expr: Expr,
    /// Match kind name (`exact`, `lpm`, `ternary`, `range`, `optional`,
    /// `selector`).
    pub match_kind: Ident,
    /// Whole element.
    pub span: Span,
}

/// One entry of a table's `actions` list: `@annotations name[(args)];`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ActionRef {
    /// Annotations (`@defaultonly`, `@tableonly`).
    pub annotations: Vec<Annotation>,
    /// Action name.
    pub name: PathName,
    /// Bound arguments when written with parentheses (`a(1)`), else `None`.
    pub args: Option<Vec<Argument>>,
    /// Whole reference.
    pub span: Span,
}

/// A table entry: `[const] [priority = N :] keyset : action(args);`
/// (P4_16 §14.2.1.4).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableEntry {
    /// Annotations (`@priority(3)`).
    pub annotations: Vec<Annotation>,
    /// `const` prefix (only in a non-const `entries` list).
    pub is_const: bool,
    /// `priority = N :`.
    pub priority: Option<Expr>,
    /// Key values.
    pub keyset: Keyset,
    /// The action to run, with arguments.
    pub action: ActionRef,
    /// Whole entry.
    pub span: Span,
}

// ---------------------------------------------------------------------------
// Statements (P4_16 §11)
// ---------------------------------------------------------------------------

/// A `{ ... }` block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    /// Annotations on the block.
    pub annotations: Vec<Annotation>,
    /// Statements.
    pub stmts: Vec<Stmt>,
    /// From `{` to `}`.
    pub span: Span,
}

/// A statement with its span.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stmt {
    /// What it is.
    pub kind: StmtKind,
    /// Whole statement.
    pub span: Span,
}

/// The kinds of [`Stmt`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StmtKind {
    /// `lhs = rhs;`
    Assign {
        /// Left-value.
        lhs: Expr,
        /// Value.
        rhs: Expr,
    },
    /// `lhs op= rhs;` (P4_16 v1.2.5 compound assignment): `lhs = lhs op rhs`
    /// with `lhs` evaluated once.
    CompoundAssign {
        /// The operator (`+` for `+=`, `|+|` for `|+|=`, `>>` for `>>=`...).
        op: BinaryOp,
        /// Left-value.
        lhs: Expr,
        /// Right operand.
        rhs: Expr,
    },
    /// `f(args);` / `t.apply();` — the expression is an [`ExprKind::Call`].
    Call(Expr),
    /// `for (init; cond; update) body` (P4_16 v1.2.5 §12.8).
    For {
        /// Initialisers: declarations, assignments or calls.
        init: Vec<Stmt>,
        /// Condition; `None` loops until `break`.
        cond: Option<Expr>,
        /// Updates run after each pass of the body (also after `continue`).
        update: Vec<Stmt>,
        /// Loop body.
        body: Box<Stmt>,
    },
    /// `for (T x in lo .. hi) body` or `for (T x in stack) body`.
    ForIn {
        /// Type of the loop variable (`None` when written without one).
        ty: Option<Type>,
        /// Loop variable.
        name: Ident,
        /// The collection, or the low end of a range.
        collection: Expr,
        /// The high end (inclusive) when the collection is a range `lo .. hi`.
        range_end: Option<Expr>,
        /// Loop body.
        body: Box<Stmt>,
    },
    /// `break;`
    Break,
    /// `continue;`
    Continue,
    /// `if (cond) then [else otherwise]`.
    If {
        /// Condition.
        cond: Expr,
        /// Then branch.
        then_branch: Box<Stmt>,
        /// Else branch.
        else_branch: Option<Box<Stmt>>,
    },
    /// `{ ... }`.
    Block(Block),
    /// `switch (expr) { cases }` (P4_16 §11.7).
    Switch {
        /// Scrutinee (`t.apply().action_run` or an expression).
        expr: Expr,
        /// Cases in order.
        cases: Vec<SwitchCase>,
    },
    /// `exit;`
    Exit,
    /// `return [expr];`
    Return(Option<Expr>),
    /// A local variable.
    Var(VarDecl),
    /// A local constant.
    Const(ConstDecl),
    /// A local instantiation (allowed by p4c in some blocks).
    Instantiation(Instantiation),
    /// `;`
    Empty,
}

/// `label: { ... }` or `label:` (fall through to the next case).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SwitchCase {
    /// The label.
    pub label: SwitchLabel,
    /// Body; `None` for a fall-through label.
    pub body: Option<Block>,
    /// Whole case.
    pub span: Span,
}

/// A switch label.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SwitchLabel {
    /// `default`.
    Default(Span),
    /// An action name (for `action_run`) or a constant expression.
    Expr(Expr),
}

// ---------------------------------------------------------------------------
// Expressions (P4_16 §8)
// ---------------------------------------------------------------------------

/// An expression with its span.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expr {
    /// What it is.
    pub kind: ExprKind,
    /// Whole expression.
    pub span: Span,
}

/// An integer literal, decoded (P4_16 §6.4.3.3).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IntLit {
    /// Magnitude (its low 128 bits when [`IntLit::wide`] is set).
    pub value: u128,
    /// The magnitude as little-endian `u64` limbs when it needs more than
    /// 128 bits: only a width-prefixed literal wider than 128 bits
    /// (`336w0x8000...`) may have one.
    pub wide: Option<Box<[u64]>>,
    /// `true` for a negative literal written with the sign inside the
    /// width prefix (`16s-3`). A leading `-` outside the literal is a
    /// [`UnaryOp::Neg`] instead.
    pub negative: bool,
    /// `Some((width, signed))` for `8w5` (`(8, false)`) / `16s3` (`(16, true)`);
    /// `None` for an arbitrary-precision `int` literal.
    pub width: Option<(u32, bool)>,
    /// 2, 8, 10 or 16.
    pub radix: u32,
    /// The literal as written.
    pub raw: String,
}

/// An argument of a call or instantiation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Argument {
    /// `name = value` (named argument, P4_16 §6.8.2).
    pub name: Option<Ident>,
    /// The value; [`ExprKind::DontCare`] for `_`.
    pub value: Expr,
    /// Whole argument.
    pub span: Span,
}

/// `name = value` in struct initialisers and structured annotations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NamedExpr {
    /// Name.
    pub name: Ident,
    /// Value.
    pub value: Expr,
    /// Whole item.
    pub span: Span,
}

/// Unary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnaryOp {
    /// `!` logical not.
    Not,
    /// `~` bitwise complement.
    Complement,
    /// `-` negation.
    Neg,
    /// `+` (no-op).
    Plus,
}

/// Binary operators, see [`BinaryOp::precedence`]. The keyset operators
/// `&&&` and `..` are not expressions; see [`KeysetElem`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinaryOp {
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `%`
    Mod,
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `|+|` saturating add.
    AddSat,
    /// `|-|` saturating subtract.
    SubSat,
    /// `<<`
    Shl,
    /// `>>`
    Shr,
    /// `<=`
    Le,
    /// `>=`
    Ge,
    /// `<`
    Lt,
    /// `>`
    Gt,
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `&`
    BitAnd,
    /// `^`
    BitXor,
    /// `|`
    BitOr,
    /// `++` concatenation.
    Concat,
    /// `&&`
    And,
    /// `||`
    Or,
}

impl BinaryOp {
    /// Binding strength, higher binds tighter. P4 differs from C: the
    /// bitwise operators bind tighter than comparisons (P4_16 Appendix H
    /// precedence table): `||` 1, `&&` 2, `== !=` 3, `< > <= >=` 4, `|` 5,
    /// `^` 6, `&` 7, `<< >>` 8, `+ - |+| |-| ++` 9, `* / %` 10. All are
    /// left-associative; the ternary `?:` binds looser than all of them.
    pub fn precedence(self) -> u8 {
        use BinaryOp::*;
        match self {
            Or => 1,
            And => 2,
            Eq | Ne => 3,
            Le | Ge | Lt | Gt => 4,
            BitOr => 5,
            BitXor => 6,
            BitAnd => 7,
            Shl | Shr => 8,
            Add | Sub | AddSat | SubSat | Concat => 9,
            Mul | Div | Mod => 10,
        }
    }

    /// The operator as written.
    pub fn as_str(self) -> &'static str {
        use BinaryOp::*;
        match self {
            Mul => "*",
            Div => "/",
            Mod => "%",
            Add => "+",
            Sub => "-",
            AddSat => "|+|",
            SubSat => "|-|",
            Shl => "<<",
            Shr => ">>",
            Le => "<=",
            Ge => ">=",
            Lt => "<",
            Gt => ">",
            Eq => "==",
            Ne => "!=",
            BitAnd => "&",
            BitXor => "^",
            BitOr => "|",
            Concat => "++",
            And => "&&",
            Or => "||",
        }
    }
}

/// The kinds of [`Expr`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExprKind {
    /// An integer literal.
    Int(IntLit),
    /// `true` / `false`.
    Bool(bool),
    /// A string literal, escapes decoded.
    Str(String),
    /// A (possibly dot-prefixed) name. Keyword-named things used as
    /// expressions (`error` in `error.NoMatch`) appear here too.
    Name(PathName),
    /// `base.member` (field, enum member, method, `error.X`, `hdr.isValid`,
    /// `t.apply().hit`, `stack.next`...).
    Member {
        /// The left side.
        base: Box<Expr>,
        /// The member name.
        member: Ident,
    },
    /// `base[index]` (header stack element).
    Index {
        /// The stack.
        base: Box<Expr>,
        /// The index.
        index: Box<Expr>,
    },
    /// `base[hi:lo]` bit slice (P4_16 §8.5), or `base[lo +: width]`.
    Slice {
        /// The value sliced.
        base: Box<Expr>,
        /// High bit (inclusive); `lo + width - 1` for `+:`.
        hi: Box<Expr>,
        /// Low bit (inclusive).
        lo: Box<Expr>,
        /// The width when written `base[lo +: width]` (P4_16 v1.2.5 §8.6),
        /// whose `lo` may be a run-time value.
        width: Option<Box<Expr>>,
    },
    /// `callee<type_args>(args)`.
    Call {
        /// What is called (a name, a member, ...).
        callee: Box<Expr>,
        /// Explicit type arguments.
        type_args: Vec<Type>,
        /// Arguments.
        args: Vec<Argument>,
    },
    /// Unary operator.
    Unary {
        /// Operator.
        op: UnaryOp,
        /// Operand.
        operand: Box<Expr>,
    },
    /// Binary operator.
    Binary {
        /// Operator.
        op: BinaryOp,
        /// Left operand.
        lhs: Box<Expr>,
        /// Right operand.
        rhs: Box<Expr>,
    },
    /// `cond ? a : b`.
    Ternary {
        /// Condition.
        cond: Box<Expr>,
        /// Value when true.
        then_expr: Box<Expr>,
        /// Value when false.
        else_expr: Box<Expr>,
    },
    /// `(T) expr`.
    Cast {
        /// Target type.
        ty: Type,
        /// Value.
        expr: Box<Expr>,
    },
    /// `{ a = 1, b = 2 }` (P4_16 §8.13). A typed initialiser is written as a
    /// cast around it: `(S){ a = 1 }`.
    StructInit(Vec<NamedExpr>),
    /// `{ a, b }` list / tuple expression (P4_16 §8.11, §8.12).
    List(Vec<Expr>),
    /// `this` (inside abstract method implementations).
    This,
    /// `default` as an expression.
    Default,
    /// `_`.
    DontCare,
    /// `...` in a list or struct initialiser.
    DotDotDot,
    /// `{#}`: an invalid header or header union (P4_16 §8.17).
    Invalid,
}

// ---------------------------------------------------------------------------
// Types (P4_16 §7)
// ---------------------------------------------------------------------------

/// A type reference with its span.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Type {
    /// What it is.
    pub kind: TypeKind,
    /// Where it was written.
    pub span: Span,
}

/// The kinds of [`Type`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TypeKind {
    /// `bool`
    Bool,
    /// `error`
    Error,
    /// `match_kind`
    MatchKind,
    /// `string`
    String,
    /// `void`
    Void,
    /// `int` (arbitrary precision).
    Int,
    /// `bit<W>`; plain `bit` is `bit<1>` (the parser fills in a literal 1).
    Bit(Box<Expr>),
    /// `int<W>`.
    SignedInt(Box<Expr>),
    /// `varbit<W>`.
    Varbit(Box<Expr>),
    /// A named type (header, struct, typedef, extern, parser, type
    /// parameter...) with optional type arguments.
    Named {
        /// The name.
        name: PathName,
        /// Type arguments (`register<bit<32>>`); `_` appears as
        /// [`TypeKind::DontCare`].
        args: Vec<Type>,
    },
    /// `T[N]` header stack.
    Stack {
        /// Element type.
        elem: Box<Type>,
        /// Size.
        size: Box<Expr>,
    },
    /// `tuple<A, B>`.
    Tuple(Vec<Type>),
    /// `list<T>` (P4_16 §7.2.10): any number of `T` values.
    List(Box<Type>),
    /// `_` as a type argument.
    DontCare,
}
