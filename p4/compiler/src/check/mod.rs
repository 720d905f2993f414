//! The checker: AST → checked IR plus, beside it, its
//! [`ir::info::ProgramInfo`] (P4Info objects and the side table of runtime
//! indices by IR handle) (P4_16 spec §6.5 name resolution, §7 types, §8
//! expressions, §11 statements, §12 parsers, §13 controls, §14 tables;
//! v1model for the package and externs).
//!
//! Contract:
//! - [`check`] reports every error it finds, each a [`Diagnostic`] with a
//!   span and a stable `P4E1xxx` code ([`codes`]); it returns `Err` if any
//!   was an error, so unchecked IR never reaches a back end. Warnings come
//!   back alongside a successful result.
//! - Declarations are processed in source order (declare before use).
//!   Names resolve innermost scope first; `.name` resolves at top level.
//! - Every declaration is checked whether or not it is used, as p4c does:
//!   a control with constructor parameters is also checked at its
//!   declaration (parameters bound to placeholders, errors reported only
//!   if it is never instantiated), and the signatures of externs, block
//!   types, packages and generic structs must name declared types.
//! - Every IR expression has a concrete type: integer literals without a
//!   width take the width of their context (`x + 1`, `x == 0x800`); a
//!   literal that still has no context is an error where a width is needed.
//! - Constants are folded ([`fold`]): `const` declarations, widths such as
//!   `bit<(W+1)>`, stack and table sizes, keysets, entries, switch labels.
//! - An internal invariant break becomes a `Bug` diagnostic, never a panic.
//!
//! Widths are `0..=`[`MAX_WIDTH`] bits (`bit<0>` holds only 0; its header
//! fields take no bits on the wire). Up to 128 bits the target holds a
//! value in a native integer; above, in `p4_target::wide::Bits` (u64 limbs),
//! and wide constants fold exactly ([`fold`]).
//!
//! Supported beyond the common path: header stacks, unions, varbit headers,
//! structs of bit strings as header fields (laid out flattened),
//! lookahead, value sets (also over key tuples), sub-parsers and
//! sub-controls (also generic and with constructor parameters, checked
//! once per list of type and constructor arguments; control-typed
//! constructor parameters share the instance passed; extern instances
//! passed as apply or constructor parameters reach the caller's object,
//! see `extern_params`),
//! generic structs (monomorphised per use), generic functions
//! (monomorphised per list of type arguments), tuples, serializable enums,
//! action profiles and selectors (also inline), direct counters and meters,
//! registers, counters, meters, hash, random, checksums (with payload for
//! csum16), clone/resubmit/recirculate (also the deprecated data forms),
//! digests, truncate, assert/assume, static_assert, bound action arguments.
//!
//! User-defined externs are checked in [`user_externs`].
//!
//! Not supported yet, each with a `P4E1060` diagnostic naming it: generic
//! and abstract user externs (see [`user_externs`]), extern
//! instances in parsers, header-union initialisers,
//! varbit fields in structs or stacks, ranges over signed keys, and
//! checksums with payload for algorithms other than csum16.

mod blocks;
pub mod codes;
mod expr;
mod extern_alias;
mod extern_params;
pub mod fold;
mod overloads;
mod package;
mod program_info;
mod select;
mod stmt;
mod user_externs;

use crate::diag::{Diagnostic, Span};
use crate::front::ast;
use crate::ir::{self, Handle, Ty};
use std::collections::HashMap;

/// The widest `bit<W>`/`int<W>` the compiler accepts (p4c sets no limit; a
/// `bit<2048>` is 256 bytes). Folding of wide constants works on
/// [`fold::Wide`] values of exactly this many bits.
pub const MAX_WIDTH: u32 = 2048;

/// The widest `varbit<W>` the compiler accepts: a 9216-byte jumbo frame, the
/// longest a port carries (p4c sets no limit). A varbit's bytes live inline in
/// its header, so the bound keeps a header's size that of a packet; INT's
/// `varbit<8032>` metadata stack fits.
pub const MAX_VARBIT_WIDTH: u32 = 9216 * 8;

/// What a name refers to.
#[derive(Clone, Debug)]
pub(crate) enum Sym {
    /// A folded constant, with the type it was declared with for the
    /// nominal checks (as for [`Sym::Var`]).
    Const(ir::Expr, Option<Option<String>>),
    /// An infinite-precision integer constant (`const int x = 5;`).
    IntConst(i128),
    /// A type.
    Type(Ty),
    /// A variable or parameter; `writable` is false for `in` parameters.
    /// A variable: where it lives, its type, whether it is writable, and
    /// the type it was declared with for the nominal checks: `Some(None)`
    /// a plain type, `Some(Some(T))` a `type`-declared `T`, `None` not
    /// known (not checked); last, for a tuple, its elements' declared
    /// types as [`Checker::tuple_nominals`] gives them.
    Var(
        ir::VarRef,
        Ty,
        bool,
        Option<Option<String>>,
        Vec<Option<String>>,
    ),
    /// A `packet_in` (false) / `packet_out` (true) parameter.
    Packet(bool),
    /// An action.
    Action(Handle<ir::Action>),
    /// A function.
    Function(Handle<ir::Function>),
    /// A table of the enclosing control.
    Table(Handle<ir::Table>),
    /// An extern object of the enclosing control.
    Extern(u32),
    /// A sub-control instance of the enclosing control.
    SubControl(u32),
    /// A control declaration.
    Control(Handle<ir::Control>),
    /// A parser declaration.
    Parser(Handle<ir::Parser>),
    /// A parser value set: (index in the program's value sets, element type).
    ValueSet(u32, Ty),
    /// A declared extern function or extern type, by name.
    ExternDecl(String),
    /// A parser/control/package type declaration.
    BlockType,
    /// A generic struct or header, instantiated at each use.
    Generic(String),
    /// A control with constructor parameters, checked at each instantiation.
    CtorControl(String),
    /// A parser with constructor parameters, checked at each instantiation.
    CtorParser(String),
    /// A generic function, checked (monomorphised) per type arguments;
    /// the key of its declaration in [`Checker::generic_fns`].
    GenericFunction(String),
    /// Functions overloaded by number or names of parameters, each a
    /// [`Sym::Function`] or a [`Sym::GenericFunction`] (`overloads.rs`).
    Overloaded(Vec<Sym>),
    /// A sub-parser instance of the enclosing parser.
    SubParser(Handle<ir::Parser>),
    /// A top-level extern instance (each control re-declares it as an
    /// [`Sym::Extern`] of its own).
    GlobalExtern,
}

/// A user extern type's declaration and the scopes it was declared in.
pub(crate) type UserExternAst = (ast::ExternDecl, Vec<HashMap<String, Sym>>);

/// A generic user extern function's prototype and its scopes.
pub(crate) type GenericUserFn = (ast::FunctionPrototype, Vec<HashMap<String, Sym>>);

/// Where statements are being checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BodyKind {
    /// A parser state.
    Parser,
    /// A control's apply block.
    Apply,
    /// An action body.
    Action,
    /// A function body.
    Function,
}

/// The body under construction.
#[derive(Debug)]
pub(crate) struct Body {
    pub(crate) kind: BodyKind,
    pub(crate) vars: Vec<ir::Var>,
    pub(crate) ret: Ty,
    /// Whether this is a deparser (packet_out available) / parser.
    pub(crate) control: Option<Handle<ir::Control>>,
    /// How many loops enclose the statement being checked.
    pub(crate) loops: u32,
    /// Extern instances of a parser or function body being checked (a
    /// control keeps its own in [`ir::Control::externs`]): the parser's
    /// own, and the top-level instances the body uses, each with its
    /// P4Info name and, for a top-level one, its source name.
    pub(crate) externs: Vec<BodyExtern>,
}

/// An extern instance of a parser or function body (see [`Body::externs`]).
#[derive(Clone, Debug)]
pub(crate) struct BodyExtern {
    pub(crate) inst: ir::ExternInst,
    pub(crate) name: program_info::NameSpec,
    /// The top-level instance's name when this is one.
    pub(crate) global: Option<String>,
}

/// The checker's state.
pub(crate) struct Checker {
    pub(crate) prog: ir::Program,
    pub(crate) diags: Vec<Diagnostic>,
    pub(crate) scopes: Vec<HashMap<String, Sym>>,
    pub(crate) body: Option<Body>,
    pub(crate) match_kinds: Vec<String>,
    /// The enum that values of type `match_kind` are, made at their first
    /// use ([`Checker::match_kind_enum`]).
    pub(crate) match_kind_enum: Option<Handle<ir::EnumDecl>>,
    /// Extra per-declaration facts for ProgramInfo.
    pub(crate) facts: program_info::Facts,
    /// Name of the control or parser being checked (P4Info prefix).
    pub(crate) block_name: Option<String>,
    /// The `type`-declared type each type name stands for (a `type` names
    /// itself; a `typedef` of one names the same), for the nominal checks
    /// of [`Checker::check_nominal`].
    pub(crate) nominal_types: HashMap<String, String>,
    /// The `type`-declared type of struct and header fields declared with
    /// one, by (composite index, field index).
    pub(crate) field_nominal: HashMap<(usize, u32), String>,
    /// The declared type (for the nominal checks) of each use of a
    /// variable, by the use's span: `Some(T)` for a `type`-declared `T`.
    pub(crate) var_nominal: HashMap<Span, Option<String>>,
    /// Structs made up for tuple-typed digest data, by element types.
    pub(crate) tuple_structs: Vec<(Vec<Ty>, Handle<ir::Composite>)>,
    /// Generic struct/header declarations by name.
    pub(crate) generics: HashMap<String, (ast::StructLikeDecl, ir::CompositeKind)>,
    /// Instantiations of generic types already built.
    pub(crate) generic_cache: HashMap<(String, Vec<Ty>), Ty>,
    /// Controls with constructor parameters, by name.
    pub(crate) ctor_controls: HashMap<String, ast::ControlDecl>,
    /// Controls whose directionless `int` apply parameters were made
    /// constructor parameters: their positions among the apply
    /// parameters, by control name.
    pub(crate) apply_int_params: HashMap<String, Vec<usize>>,
    /// The v1model version the program picked (`__v1model_version`,
    /// p4c's default 20180101 until that constant is checked): which
    /// declarations of `crate::v1model` apply.
    pub(crate) v1model_version: u128,
    /// The index type argument `I` of each `counter<I>`, `meter<I>` and
    /// `register<T, I>` instance (v1model 20200408), by the instance's
    /// span: what their methods' `index` must be.
    pub(crate) extern_index_ty: HashMap<Span, Ty>,
    /// The cell type argument `T` of each `register<T..>` instance as
    /// written, by the instance's span, for the nominal checks of `read`
    /// and `write` (P4_16 §7.6: `register<Port_t>` holds `Port_t`s).
    pub(crate) register_cell_nominal: HashMap<Span, Option<String>>,
    /// The opaque types standing for type parameters in the trial check of
    /// a generic declaration ([`Checker::opaque_types`]), by composite
    /// index; discarded with the trial's IR.
    pub(crate) opaque_composites: std::collections::HashSet<usize>,
    /// Extern instances passed to controls and parsers as parameters: the
    /// parameters, what each is bound to, and the bindings in flight
    /// (`check::extern_params`).
    pub(crate) extern_params: extern_params::ExternParamState,
    /// Their instantiations: (name, argument values) → control.
    pub(crate) ctor_cache: HashMap<(String, Vec<String>), Handle<ir::Control>>,
    /// Their diagnostics from the check at declaration (parameters bound
    /// to placeholder values), reported only for controls never
    /// instantiated: an instantiated one is checked with its real values.
    pub(crate) ctor_trials: Vec<(String, Vec<Diagnostic>)>,
    /// Controls and parsers with constructor parameters instantiated at
    /// least once.
    pub(crate) ctor_used: std::collections::HashSet<String>,
    /// The files named `v1model.p4` (ours or one found on the include
    /// path): v1model's enums are the ones declared there.
    pub(crate) model_files: Vec<crate::diag::FileId>,
    /// Controls without constructor parameters, by name: a second
    /// instance of one that declares actions gets a copy of its own
    /// ([`Checker::instance_copy`]).
    pub(crate) plain_controls: HashMap<String, ast::ControlDecl>,
    /// Controls (handle indices) some instance already stands for.
    pub(crate) instantiated_controls: std::collections::HashSet<usize>,
    /// Parsers with constructor parameters, by name.
    pub(crate) ctor_parsers: HashMap<String, ast::ParserDecl>,
    /// Their instantiations: (name, argument values) → parser.
    pub(crate) ctor_parser_cache: HashMap<(String, Vec<String>), Handle<ir::Parser>>,
    /// Instances passed to control-typed constructor parameters:
    /// (control handle index, instance index) → the indices, among that
    /// control's instances, of the instances passed, in parameter order.
    pub(crate) instance_args: HashMap<(usize, u32), Vec<u32>>,
    /// Instances that stand for a control-typed constructor parameter:
    /// (control handle index, instance index) → the parameter's position
    /// among the control-typed ones. The instance tree points them at the
    /// instance passed, so one object is shared (P4_16 §10.3.1).
    pub(crate) instance_aliases: HashMap<(usize, u32), usize>,
    /// Control-typed constructor parameters of the control about to be
    /// checked (name, control of the instance passed).
    pub(crate) pending_aliases: Vec<(ast::Ident, Handle<ir::Control>)>,
    /// Instances passed by the constructor call just checked.
    pub(crate) pending_instance_args: Vec<u32>,
    /// Declarations of the hidden locals that `_` arguments to `out`
    /// parameters were bound to while checking the current statement; the
    /// statement checker puts them before that statement.
    pub(crate) pending_decls: Vec<ir::Stmt>,
    /// The name of the control instance being declared (instances created
    /// for instantiations among its constructor arguments are named
    /// inside it).
    pub(crate) instantiating: Option<String>,
    /// Whether the top-level action being checked needs the standard
    /// metadata of the control that runs it (`mark_to_drop()`).
    pub(crate) uses_implicit_std_meta: bool,
    /// Names of parser types and parsers declared so far (a control's
    /// constructor parameter may not be one).
    pub(crate) parser_type_names: std::collections::HashSet<String>,
    /// Names of control types and controls declared so far (a parser's
    /// constructor parameter may not be one).
    pub(crate) control_type_names: std::collections::HashSet<String>,
    /// Signatures of the parser, control and package types and of the
    /// parsers and controls declared so far, by name: a package's
    /// arguments are checked against its parameters' types.
    pub(crate) block_sigs: HashMap<String, ast::TypeDeclSignature>,
    /// Generic functions by name, with the scopes they were declared in.
    pub(crate) generic_fns: HashMap<String, (ast::FunctionDecl, Vec<HashMap<String, Sym>>)>,
    /// Their instantiations: (name, type arguments, the `type`-declared
    /// type each argument is, if any) → function.
    pub(crate) generic_fn_cache: HashMap<GenericFnKey, Handle<ir::Function>>,
    /// Parameter names and default values of actions, by handle index
    /// (for named arguments and defaults, P4_16 §6.8.2–6.8.3).
    pub(crate) action_params: HashMap<usize, Vec<ParamSpec>>,
    /// The same for functions.
    pub(crate) function_params: HashMap<usize, Vec<ParamSpec>>,
    /// The declared result type of functions, by handle index, for the
    /// nominal checks: `Some(T)` for a `type`-declared `T`.
    pub(crate) function_ret_nominal: HashMap<usize, Option<String>>,
    /// The declared type (for the nominal checks) of call results and
    /// casts, by the span of the expression they produced.
    pub(crate) expr_nominal: HashMap<Span, Option<String>>,
    /// The element types of tuple variables as declared
    /// ([`Checker::tuple_nominals`]), by the span of each use.
    pub(crate) var_tuple_nominals: HashMap<Span, Vec<Option<String>>>,
    /// The declared result type of the function being checked, for the
    /// nominal check of its `return` values (`None` outside functions).
    pub(crate) return_nominal: Option<Option<String>>,
    /// The parameter names a call's named arguments were bound to, set by
    /// `call` for the callee it checks next: user extern methods of one
    /// arity are told apart by them (`user_method_call`).
    pub(crate) bound_param_names: Option<Vec<String>>,
    /// Top-level extern instantiations, in order.
    pub(crate) global_externs: Vec<ast::Instantiation>,
    /// User extern declarations the compiler cannot take, by name: what is
    /// not supported, reported where the extern is used (p4c accepts an
    /// unused declaration).
    pub(crate) refused_user_externs: HashMap<String, String>,
    /// Every user extern object type's declaration, with the scopes it was
    /// declared in (generic ones and generic methods are checked per use).
    pub(crate) user_extern_asts: HashMap<String, UserExternAst>,
    /// Generic user extern functions (overloads), with their scopes.
    pub(crate) generic_user_fns: HashMap<String, Vec<GenericUserFn>>,
    /// Extern object types declared without a constructor (core.p4's
    /// `packet_in` and `packet_out` among them): instantiations are for
    /// types with constructors (P4_16 §11.3), so these cannot be
    /// instantiated (p4c: "type packet_in has no matching constructor").
    pub(crate) ctorless_externs: std::collections::HashSet<String>,
}

/// A parameter as call binding sees it: its name and default value.
#[derive(Clone, Debug)]
pub(crate) struct ParamSpec {
    pub(crate) name: String,
    pub(crate) default: Option<ast::Expr>,
    /// The declared type for the nominal checks of arguments: `Some(T)`
    /// for a `type`-declared `T`, `Some(None)` a plain type, `None` not
    /// known (not checked).
    pub(crate) nominal: Option<Option<String>>,
    /// An `@optional` parameter of an extern method or function: a call
    /// may leave it out (only trailing ones here).
    pub(crate) optional: bool,
}

impl ParamSpec {
    pub(crate) fn of(params: &[ast::Param]) -> Vec<ParamSpec> {
        params
            .iter()
            .map(|p| ParamSpec {
                name: p.name.name.clone(),
                default: p.default.clone(),
                nominal: None,
                optional: ast::find_annotation(&p.annotations, "optional").is_some(),
            })
            .collect()
    }

    pub(crate) fn named(names: impl Iterator<Item = String>) -> Vec<ParamSpec> {
        names
            .map(|name| ParamSpec {
                name,
                default: None,
                nominal: None,
                optional: false,
            })
            .collect()
    }
}

/// A generic function's instantiation: its name, type arguments, the
/// `type`-declared type each argument is, if any, and the values of its
/// directionless `int` parameters.
pub(crate) type GenericFnKey = (String, Vec<Ty>, Vec<Option<String>>, Vec<i128>);

/// Checks a parsed program. `name` is the program name (file stem);
/// `model_files` are the files named `v1model.p4` the program included.
pub fn check(
    prog: &ast::Program,
    name: &str,
    model_files: &[crate::diag::FileId],
) -> Result<(ir::Program, ir::info::ProgramInfo, Vec<Diagnostic>), Vec<Diagnostic>> {
    let mut c = Checker {
        model_files: model_files.to_vec(),
        prog: ir::Program {
            name: name.to_string(),
            ..Default::default()
        },
        diags: Vec::new(),
        scopes: vec![HashMap::new()],
        body: None,
        match_kinds: Vec::new(),
        match_kind_enum: None,
        facts: Default::default(),
        block_name: None,
        tuple_structs: Vec::new(),
        nominal_types: HashMap::new(),
        field_nominal: HashMap::new(),
        var_nominal: HashMap::new(),
        generics: HashMap::new(),
        generic_cache: HashMap::new(),
        parser_type_names: Default::default(),
        control_type_names: Default::default(),
        block_sigs: HashMap::new(),
        ctor_controls: HashMap::new(),
        apply_int_params: HashMap::new(),
        extern_params: Default::default(),
        v1model_version: crate::v1model::VERSIONS.0,
        extern_index_ty: HashMap::new(),
        register_cell_nominal: HashMap::new(),
        opaque_composites: Default::default(),
        ctor_cache: HashMap::new(),
        ctor_trials: Vec::new(),
        ctor_used: Default::default(),
        plain_controls: HashMap::new(),
        instantiated_controls: Default::default(),
        ctor_parsers: HashMap::new(),
        ctor_parser_cache: HashMap::new(),
        instance_args: HashMap::new(),
        instance_aliases: HashMap::new(),
        pending_aliases: Vec::new(),
        pending_instance_args: Vec::new(),
        pending_decls: Vec::new(),
        instantiating: None,
        uses_implicit_std_meta: false,
        generic_fns: HashMap::new(),
        generic_fn_cache: HashMap::new(),
        action_params: HashMap::new(),
        function_params: HashMap::new(),
        function_ret_nominal: HashMap::new(),
        expr_nominal: HashMap::new(),
        var_tuple_nominals: HashMap::new(),
        return_nominal: None,
        bound_param_names: None,
        global_externs: Vec::new(),
        refused_user_externs: HashMap::new(),
        user_extern_asts: HashMap::new(),
        generic_user_fns: HashMap::new(),
        ctorless_externs: Default::default(),
    };
    let (prog, alias_diags) = extern_alias::resolve(prog);
    c.diags.extend(alias_diags);
    for d in &prog.decls {
        c.top_decl(d);
    }
    // p4c type-checks a control whether or not it is instantiated.
    for (name, diags) in std::mem::take(&mut c.ctor_trials) {
        if !c.ctor_used.contains(&name) {
            c.diags.extend(diags);
        }
    }
    if !c.diags.iter().any(|d| d.is_error()) {
        c.check_parser_extern_params_bound();
    }
    if c.prog.main.is_none() && !c.diags.iter().any(|d| d.is_error()) {
        c.diags.push(
            Diagnostic::error(
                codes::BAD_MAIN,
                "the program declares no `main` package instance",
            )
            .with_note(
                "a v1model program ends with `V1Switch(MyParser(), ..., MyDeparser()) main;`",
            ),
        );
    }
    if c.diags.iter().any(|d| d.is_error()) {
        return Err(c.diags);
    }
    let info = match program_info::build_program_info(&c) {
        Ok(i) => i,
        Err(d) => {
            c.diags.extend(d);
            return Err(c.diags);
        }
    };
    if c.diags.iter().any(|d| d.is_error()) {
        return Err(c.diags);
    }
    Ok((c.prog, info, c.diags))
}

impl Checker {
    // ------------------------------------------------------------ reporting

    pub(crate) fn error(&mut self, code: &str, span: Span, msg: impl Into<String>) {
        let msg = msg.into();
        self.diags
            .push(Diagnostic::error(code, msg.clone()).with_primary(span, ""));
    }

    pub(crate) fn error_label(
        &mut self,
        code: &str,
        span: Span,
        msg: impl Into<String>,
        label: impl Into<String>,
    ) {
        self.diags
            .push(Diagnostic::error(code, msg.into()).with_primary(span, label));
    }

    pub(crate) fn warn(&mut self, code: &str, span: Span, msg: impl Into<String>) {
        self.diags
            .push(Diagnostic::warning(code, msg.into()).with_primary(span, ""));
    }

    pub(crate) fn unsupported(&mut self, span: Span, what: &str) {
        self.error_label(
            codes::UNSUPPORTED,
            span,
            format!("not supported yet: {what}"),
            "used here",
        );
    }

    pub(crate) fn bug(&mut self, span: Span, msg: impl Into<String>) {
        self.diags
            .push(Diagnostic::bug(msg.into()).with_primary(span, "while checking this"));
    }

    // --------------------------------------------------------------- scopes

    pub(crate) fn push_scope(&mut self) {
        self.scopes.push(HashMap::new());
    }

    pub(crate) fn pop_scope(&mut self) {
        if self.scopes.len() > 1 {
            self.scopes.pop();
        }
    }

    pub(crate) fn declare(&mut self, id: &ast::Ident, sym: Sym) {
        let scope = self.scopes.last().expect("at least the top scope");
        // Functions overload by number or names of parameters (P4_16
        // §7.2.12).
        if let Some(old) = scope.get(&id.name).cloned()
            && let Some(merged) = self.add_overload(&old, sym.clone(), id)
        {
            let scope = self.scopes.last_mut().expect("at least the top scope");
            scope.insert(id.name.clone(), merged);
            return;
        }
        let scope = self.scopes.last_mut().expect("at least the top scope");
        // Overloads of extern functions (log_msg, mark_to_drop) and
        // re-declarations of the same extern are fine.
        if let Some(old) = scope.get(&id.name) {
            let same_extern =
                matches!((old, &sym), (Sym::ExternDecl(a), Sym::ExternDecl(b)) if a == b);
            // A parser or control may take the name of an extern function
            // (p4c keeps functions apart from types, e.g. a control named
            // `verify_checksum`); the function is then hidden.
            let block_over_fn = matches!(old, Sym::ExternDecl(f) if crate::v1model::functions(f).next().is_some())
                && matches!(
                    sym,
                    Sym::Control(_) | Sym::CtorControl(_) | Sym::Parser(_) | Sym::CtorParser(_)
                );
            if !same_extern && !block_over_fn {
                self.error_label(
                    codes::DUPLICATE,
                    id.span,
                    format!("`{}` is declared twice in the same scope", id.name),
                    "second declaration",
                );
                return;
            }
        }
        scope.insert(id.name.clone(), sym);
    }

    pub(crate) fn lookup(&self, path: &ast::PathName) -> Option<&Sym> {
        if path.top_level {
            return self.scopes[0].get(&path.ident.name);
        }
        self.lookup_str(&path.ident.name)
    }

    pub(crate) fn lookup_str(&self, name: &str) -> Option<&Sym> {
        self.scopes.iter().rev().find_map(|s| s.get(name))
    }

    // ---------------------------------------------------------------- types

    /// Evaluates a width or size expression to a constant.
    pub(crate) fn const_u32(&mut self, e: &ast::Expr, what: &str) -> Option<u32> {
        let v = self.const_number(e, what)?;
        if v < 0 || v > u32::MAX as i128 {
            self.error(
                codes::OVERFLOW,
                e.span,
                format!("{what} {v} is out of range"),
            );
            return None;
        }
        Some(v as u32)
    }

    /// Evaluates a compile-time integer expression.
    pub(crate) fn const_value(&mut self, e: &ast::Expr) -> Option<i128> {
        self.const_value_of(e, None)
    }

    /// Evaluates a compile-time number (a width, a size or a slice bound): a
    /// boolean or a string is a type error there, as in p4c.
    fn const_number(&mut self, e: &ast::Expr, what: &str) -> Option<i128> {
        self.const_value_of(e, Some(what))
    }

    /// [`Self::const_value`]; `number` names what must not be a boolean.
    fn const_value_of(&mut self, e: &ast::Expr, number: Option<&str>) -> Option<i128> {
        let before = self.diags.len();
        let te = self.expr_any(e)?;
        match te {
            expr::TE::Inf(v) => Some(v),
            expr::TE::Typed(ex) => match (&ex.kind, &ex.ty) {
                // A string literal is lowered to `Int(0)` of type string, so
                // it is refused by its type before its value is read
                // (p4c's expr-bitslice-high-unsupported-type, `x["tmp":0]`).
                (_, Ty::Bool | Ty::Str) if number.is_some() => {
                    let ty = self.ty_name(&ex.ty);
                    self.error_label(
                        codes::TYPE_MISMATCH,
                        e.span,
                        format!("the {} must be a number, not a {ty}", number.unwrap_or("")),
                        format!("a {ty}"),
                    );
                    None
                }
                (ir::ExprKind::Int(v), Ty::Int(w)) => Some(p4_target::bits::sext(*v, *w)),
                (ir::ExprKind::Int(v), _) => Some(*v as i128),
                (ir::ExprKind::Bool(b), _) => Some(*b as i128),
                _ => {
                    if self.diags.len() == before {
                        self.error_label(
                            codes::NOT_CONSTANT,
                            e.span,
                            "a compile-time constant is required here",
                            "not a constant",
                        );
                    }
                    None
                }
            },
        }
    }

    /// The width of a `bit<W>` or `int<W>`: `0..=`[`MAX_WIDTH`] (P4_16
    /// §7.1.6.2, §7.1.6.3: `bit<0>` and `int<0>` hold only the value 0).
    pub(crate) fn width(&mut self, e: &ast::Expr) -> Option<u32> {
        let w = self.const_u32(e, "width")?;
        if w > MAX_WIDTH {
            self.error_label(
                codes::BAD_WIDTH,
                e.span,
                format!("width {w} is not supported: widths must be 0..={MAX_WIDTH} bits"),
                "this width",
            );
            return None;
        }
        Some(w)
    }

    /// Resolves a type. `None` after reporting an error.
    pub(crate) fn ty(&mut self, t: &ast::Type) -> Option<Ty> {
        use ast::TypeKind as K;
        Some(match &t.kind {
            K::Bool => Ty::Bool,
            K::Error => Ty::Error,
            K::String => Ty::Str,
            K::Void => Ty::Void,
            K::Bit(w) => Ty::Bit(self.width(w)?),
            K::SignedInt(w) => Ty::Int(self.width(w)?),
            K::Varbit(w) => {
                let w_bits = self.const_u32(w, "varbit width")?;
                if w_bits == 0 || w_bits > MAX_VARBIT_WIDTH {
                    self.error_label(
                        codes::BAD_WIDTH,
                        w.span,
                        format!(
                            "varbit width {w_bits} is not supported: at most {MAX_VARBIT_WIDTH} \
                             bits (a 9216-byte jumbo frame)"
                        ),
                        "this width",
                    );
                    return None;
                }
                Ty::Varbit(w_bits)
            }
            K::Int => {
                self.error(
                    codes::UNSUPPORTED,
                    t.span,
                    "`int` (infinite precision) is only allowed for constants",
                );
                return None;
            }
            K::MatchKind => Ty::Enum(self.match_kind_enum(t.span)),
            K::List(_) => {
                // A list's length is its value's (P4_16 §7.2.10); a list
                // expression cast to one is a tuple of that many elements
                // (`Checker::list_cast`), so is a local or constant declared
                // with one (`Checker::list_decl`), a function's parameter
                // takes its argument's (`Checker::list_args_of_call`), and
                // a user extern's constructor takes one
                // (`Checker::user_params`), but no other value has this
                // type.
                self.unsupported(
                    t.span,
                    "`list<..>` types other than in a cast of a list expression, `(list<T>){..}`, \
                     a local or constant with an initialiser, a function's parameter or an extern \
                     constructor's parameter",
                );
                return None;
            }
            K::Named { name, args } => match self.lookup(name).cloned() {
                Some(Sym::Type(ty)) => {
                    if !args.is_empty() {
                        self.error(
                            codes::ARG_COUNT,
                            t.span,
                            format!("`{}` takes no type arguments", name.ident.name),
                        );
                        return None;
                    }
                    ty
                }
                Some(Sym::Generic(g)) => {
                    if args.is_empty() {
                        self.error(
                            codes::ARG_COUNT,
                            t.span,
                            format!("`{g}` needs type arguments, e.g. `{g}<bit<8>>`"),
                        );
                        return None;
                    }
                    return self.instantiate_generic(&g, args, t.span);
                }
                Some(Sym::ExternDecl(e))
                    if e != "packet_in"
                        && e != "packet_out"
                        && (crate::v1model::object(&e).is_some()
                            || self.is_user_extern_type(&e)) =>
                {
                    // An extern object type names no values: its instances
                    // are passed only to directionless block parameters
                    // (`check::extern_params`).
                    self.error_label(
                        codes::WRONG_KIND,
                        name.span,
                        format!(
                            "`{e}` is an extern object type, not a type of values: only a \
                             control's or parser's directionless parameter takes an instance of \
                             it"
                        ),
                        "an extern type",
                    );
                    return None;
                }
                Some(_) => {
                    self.error_label(
                        codes::WRONG_KIND,
                        name.span,
                        format!("`{}` is not a type", name.ident.name),
                        "expected a type",
                    );
                    return None;
                }
                None => {
                    self.error_label(
                        codes::UNKNOWN_NAME,
                        name.span,
                        format!("unknown type `{}`", name.ident.name),
                        "not declared",
                    );
                    return None;
                }
            },
            K::Stack { elem, size } => {
                let et = self.ty(elem)?;
                let n = self.const_u32(size, "stack size")?;
                match &et {
                    Ty::Composite(c)
                        if self.prog.composites[*c].kind != ir::CompositeKind::Struct => {}
                    _ => {
                        self.error(
                            codes::TYPE_MISMATCH,
                            elem.span,
                            "header stack elements must be headers or header unions",
                        );
                        return None;
                    }
                }
                if n == 0 {
                    self.error(
                        codes::BAD_WIDTH,
                        size.span,
                        "a header stack needs at least one element",
                    );
                    return None;
                }
                Ty::Stack(Box::new(et), n)
            }
            K::Tuple(items) => {
                let mut v = Vec::new();
                for i in items {
                    v.push(self.ty(i)?);
                }
                Ty::Tuple(v)
            }
            K::DontCare => {
                self.unsupported(t.span, "`_` as a type");
                return None;
            }
        })
    }

    pub(crate) fn ty_name(&self, t: &Ty) -> String {
        match t {
            Ty::Bool => "bool".into(),
            Ty::Bit(w) => format!("bit<{w}>"),
            Ty::Int(w) => format!("int<{w}>"),
            Ty::Varbit(w) => format!("varbit<{w}>"),
            Ty::Error => "error".into(),
            Ty::Enum(e) | Ty::SerEnum(e) => self.prog.enums[*e].name.clone(),
            Ty::Composite(c) => self.prog.composites[*c].name.clone(),
            Ty::Stack(e, n) => format!("{}[{n}]", self.ty_name(e)),
            Ty::Str => "string".into(),
            Ty::Tuple(v) => format!(
                "tuple<{}>",
                v.iter()
                    .map(|t| self.ty_name(t))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Ty::Void => "void".into(),
        }
    }

    // ------------------------------------------------------ top-level decls

    /// An extern method or function returns a value of a type a target can
    /// hold: never `int`, whose values exist only at compile time (p4c's
    /// issue3273: "illegal return type for method").
    fn method_return_type(&mut self, f: &ast::FunctionPrototype) {
        if matches!(f.return_type.kind, ast::TypeKind::Int) {
            self.error_label(
                codes::TYPE_MISMATCH,
                f.return_type.span,
                format!(
                    "`{}` cannot return `int`: an infinite-precision integer exists only at compile time",
                    f.name.name
                ),
                "give it a width",
            );
        }
    }

    /// Structured annotations (`@name[...]`, P4_16 §18.2): a name is used
    /// once per element, and not also as an unstructured annotation there
    /// (p4c: "duplicate name for structured annotation"); their values are
    /// not lists (p4c's structured-annotation-e1..e3) but compile-time
    /// known values of type string, int or bool (a bit string too, as p4c
    /// folds it to a constant). `type_params` are the element's own (in
    /// scope for its annotations, as in p4c's `type-in-expr`).
    fn structured_annotations(&mut self, anns: &[ast::Annotation], type_params: &[ast::Ident]) {
        for (i, a) in anns.iter().enumerate() {
            let ast::AnnotationBody::Structured { exprs, kvs, .. } = &a.body else {
                continue;
            };
            if anns.iter().enumerate().any(|(j, o)| {
                j != i
                    && o.name.name == a.name.name
                    && (j < i || !matches!(o.body, ast::AnnotationBody::Structured { .. }))
            }) {
                self.error_label(
                    codes::DUPLICATE,
                    a.span,
                    format!(
                        "structured annotation `@{}` is given more than once here",
                        a.name.name
                    ),
                    "same name again",
                );
            }
            let values = exprs.iter().chain(kvs.iter().map(|kv| &kv.value));
            for e in values {
                if matches!(
                    e.kind,
                    ast::ExprKind::List(_) | ast::ExprKind::StructInit(_)
                ) {
                    self.error_label(
                        codes::NOT_CONSTANT,
                        e.span,
                        "a structured annotation holds literals and names, not lists",
                        "a list",
                    );
                } else if type_params.is_empty() {
                    self.annotation_value(e);
                } else {
                    self.discarding_changes(|c| {
                        c.push_scope();
                        c.declare_opaque_types(type_params);
                        c.annotation_value(e);
                        c.pop_scope();
                    });
                }
            }
        }
    }

    /// One value of a structured annotation: a compile-time known string,
    /// integer or boolean (P4_16 §18.2; p4c: "structured annotation must
    /// be compile-time constant values").
    fn annotation_value(&mut self, e: &ast::Expr) {
        let constant = match self.expr_any(e) {
            None => return,
            Some(expr::TE::Inf(_)) => true,
            Some(expr::TE::Typed(x)) => {
                matches!(x.ty, Ty::Str | Ty::Bool | Ty::Bit(_) | Ty::Int(_))
                    && matches!(
                        x.kind,
                        ir::ExprKind::Int(_) | ir::ExprKind::WideInt(_) | ir::ExprKind::Bool(_)
                    )
            }
        };
        if !constant {
            self.error_label(
                codes::NOT_CONSTANT,
                e.span,
                "a structured annotation's values are compile-time known strings, integers or \
                 booleans",
                "not a compile-time constant",
            );
        }
    }

    /// `@p4runtime_translation(uri, T)` on a `type`: p4c's grammar takes a
    /// string URI and, as the controller's type, `bit<W>` with a literal
    /// width, `string` or a literal width alone (issue2283); anything else
    /// (`bool`, `int<32>`, `bit<5+3>`) gives no P4Info translation.
    fn p4rt_translation(&mut self, a: &ast::Annotation) {
        let ast::AnnotationBody::Unstructured { raw, .. } = &a.body else {
            self.p4rt_translation_error(a.span);
            return;
        };
        let raw = raw.trim();
        let rest = raw
            .strip_prefix('"')
            .and_then(|r| r.find('"').map(|i| &r[i + 1..]))
            .and_then(|r| r.trim_start().strip_prefix(','));
        let Some(ty) = rest.map(str::trim) else {
            self.p4rt_translation_error(a.span);
            return;
        };
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        let bit_w = ty
            .strip_prefix("bit")
            .map(str::trim_start)
            .and_then(|r| r.strip_prefix('<'))
            .and_then(|r| r.strip_suffix('>'))
            .is_some_and(|w| digits(w.trim()));
        if !(bit_w || ty == "string" || digits(ty)) {
            self.p4rt_translation_error(a.span);
        }
    }

    fn p4rt_translation_error(&mut self, span: Span) {
        self.error_label(
            codes::TYPE_MISMATCH,
            span,
            "`@p4runtime_translation` takes a URI string and the controller's type: `bit<W>` with a literal W, or `string`",
            "not a controller type p4c accepts",
        );
    }

    fn top_decl(&mut self, d: &ast::Decl) {
        let type_params: &[ast::Ident] = match d {
            ast::Decl::Parser(p) => &p.signature.type_params,
            ast::Decl::Control(c) => &c.signature.type_params,
            ast::Decl::ParserType(t) | ast::Decl::ControlType(t) | ast::Decl::Package(t) => {
                &t.type_params
            }
            ast::Decl::Function(f) => &f.type_params,
            ast::Decl::ExternFunction(f) => &f.type_params,
            ast::Decl::Extern(e) => &e.type_params,
            ast::Decl::Header(s) | ast::Decl::HeaderUnion(s) | ast::Decl::Struct(s) => {
                &s.type_params
            }
            _ => &[],
        };
        self.structured_annotations(d.annotations(), type_params);
        match d {
            ast::Decl::Const(c) => {
                if let Some(value) = self.const_decl(c) {
                    self.prog.constants.push(ir::Constant {
                        name: c.name.name.clone(),
                        value,
                        span: c.span,
                    });
                }
            }
            ast::Decl::Typedef(t) => {
                if let Some(a) = ast::find_annotation(&t.annotations, "p4runtime_translation") {
                    self.p4rt_translation(a);
                }
                if let Some(ty) = self.ty(&t.ty) {
                    if t.is_new_type && !matches!(ty, Ty::Bool | Ty::Bit(_) | Ty::Int(_)) {
                        // P4_16 §7.6: `type` introduces a new name for a
                        // base type (p4c's typedef-and-type-definitions:
                        // "'type' can only be applied to base types").
                        self.error_label(
                            codes::TYPE_MISMATCH,
                            t.ty.span,
                            format!(
                                "`type` applies to bool, bit<W> and int<W> (or a type over one), not {}",
                                self.ty_name(&ty)
                            ),
                            "not a base type",
                        );
                    }
                    self.declare(&t.name, Sym::Type(ty));
                    let nominal = if t.is_new_type {
                        Some(t.name.name.clone())
                    } else {
                        self.nominal_of_type(&t.ty)
                    };
                    if let Some(n) = nominal {
                        self.nominal_types.insert(t.name.name.clone(), n);
                    }
                }
            }
            ast::Decl::Header(s) => self.struct_like(s, ir::CompositeKind::Header),
            ast::Decl::HeaderUnion(s) => self.struct_like(s, ir::CompositeKind::Union),
            ast::Decl::Struct(s) => self.struct_like(s, ir::CompositeKind::Struct),
            ast::Decl::Enum(e) => self.enum_decl(e),
            ast::Decl::Error(l) => {
                for m in &l.members {
                    if self.prog.errors.contains(&m.name) {
                        self.error(
                            codes::DUPLICATE,
                            m.span,
                            format!("error `{}` declared twice", m.name),
                        );
                    } else {
                        self.prog.errors.push(m.name.clone());
                    }
                }
            }
            ast::Decl::MatchKind(l) => {
                // Match kinds are names of the top-level scope (P4_16 §7.1.3):
                // one declared twice is a duplicate declaration.
                for m in &l.members {
                    if self.match_kinds.contains(&m.name) {
                        self.error(
                            codes::DUPLICATE,
                            m.span,
                            format!("match kind `{}` declared twice", m.name),
                        );
                    } else {
                        self.match_kinds.push(m.name.clone());
                        if let Some(h) = self.match_kind_enum {
                            let i = self.prog.enums[h].members.len() as u128;
                            self.prog.enums[h].members.push((m.name.clone(), i));
                        }
                    }
                }
            }
            ast::Decl::Extern(e) => {
                let n = e.name.clone();
                self.declare(&n, Sym::ExternDecl(e.name.name.clone()));
                if !e
                    .members
                    .iter()
                    .any(|m| matches!(m, ast::ExternMember::Constructor { .. }))
                {
                    self.ctorless_externs.insert(e.name.name.clone());
                }
                for m in &e.members {
                    match m {
                        ast::ExternMember::Constructor { params, .. } => {
                            self.check_param_types(params, None, &[&e.type_params]);
                        }
                        ast::ExternMember::Method(f) => {
                            // A method's type parameter may not reuse a name
                            // its extern's type parameters hold (p4c's
                            // generic_e: `void f<D>(in D d)` inside `X<D>`).
                            for t in &f.type_params {
                                if e.type_params.iter().any(|x| x.name == t.name) {
                                    self.error_label(
                                        codes::DUPLICATE,
                                        t.span,
                                        format!(
                                            "type parameter `{}` of method `{}` shadows the one \
                                             of extern `{}`",
                                            t.name, f.name.name, e.name.name
                                        ),
                                        "already a type parameter of the extern",
                                    );
                                }
                            }
                            self.method_return_type(f);
                            self.check_param_types(
                                &f.params,
                                Some(&f.return_type),
                                &[&e.type_params, &f.type_params],
                            )
                        }
                    }
                }
                self.check_overloads(e);
                self.no_self_reference(e);
                self.no_method_named_like_extern(e);
                if crate::v1model::object(&e.name.name).is_none() {
                    self.user_extern_decl(e);
                }
            }
            ast::Decl::ExternFunction(f) => {
                let n = f.name.clone();
                self.declare(&n, Sym::ExternDecl(f.name.name.clone()));
                self.method_return_type(f);
                self.check_param_types(&f.params, Some(&f.return_type), &[&f.type_params]);
                self.unique_param_names(&[names(&f.type_params), param_names(&f.params)], false);
                // A function named like one of v1model's is the program's
                // own overload when v1model has none of its arity (P4_16
                // overloads functions by their number of parameters, as
                // p4c does: its `random(bit<5> logRange)` beside
                // v1model's); one of v1model's arity is v1model's.
                if !crate::v1model::functions(&f.name.name)
                    .any(|s| s.params.len() == f.params.len())
                {
                    self.user_function_decl(f);
                }
            }
            ast::Decl::ParserType(s) | ast::Decl::ControlType(s) | ast::Decl::Package(s) => {
                match d {
                    ast::Decl::ParserType(_) => self.parser_type_names.insert(s.name.name.clone()),
                    ast::Decl::ControlType(_) => {
                        self.control_type_names.insert(s.name.name.clone())
                    }
                    _ => false,
                };
                self.block_sigs.insert(s.name.name.clone(), s.clone());
                self.unique_param_names(&[names(&s.type_params), param_names(&s.params)], false);
                self.declare(&s.name, Sym::BlockType);
                self.check_param_types(&s.params, None, &[&s.type_params]);
            }
            ast::Decl::Parser(p) => {
                self.block_param_names(&p.signature, &p.ctor_params);
                self.no_block_ctor_params(&p.ctor_params, true);
                self.parser_type_names.insert(p.signature.name.name.clone());
                self.block_sigs
                    .insert(p.signature.name.name.clone(), p.signature.clone());
                self.parser_decl(p)
            }
            ast::Decl::Control(c) => {
                self.block_param_names(&c.signature, &c.ctor_params);
                self.no_block_ctor_params(&c.ctor_params, false);
                self.control_type_names
                    .insert(c.signature.name.name.clone());
                self.block_sigs
                    .insert(c.signature.name.name.clone(), c.signature.clone());
                self.control_decl(c)
            }
            ast::Decl::Action(a) => {
                if let Some(h) = self.action_decl(a, None) {
                    self.declare(&a.name, Sym::Action(h));
                }
            }
            ast::Decl::Function(f) => self.function_decl(f),
            ast::Decl::Instantiation(i) => self.main_decl(i),
            // The P4_16 grammar has no variable among its top-level
            // declarations (p4c's globalVar_e).
            ast::Decl::Var(v) => self.error(
                codes::NOT_ALLOWED_HERE,
                v.span,
                "variables may only be declared in parsers, controls, actions and functions",
            ),
            ast::Decl::ValueSet(v) => self.error(
                codes::NOT_ALLOWED_HERE,
                v.span,
                "value sets may only be declared in parsers",
            ),
            ast::Decl::Table(t) => self.error(
                codes::NOT_ALLOWED_HERE,
                t.span,
                "tables may only be declared in controls",
            ),
        }
    }

    /// Declares a `const`; returns its value when it is a number or a
    /// boolean (what [`ir::Program::constants`] records).
    pub(crate) fn const_decl(&mut self, c: &ast::ConstDecl) -> Option<ir::ConstValue> {
        if matches!(c.ty.kind, ast::TypeKind::Int) {
            let v = self.const_value(&c.value)?;
            self.declare(&c.name, Sym::IntConst(v));
            return Some(ir::ConstValue::Integer(v));
        }
        let e = if let ast::TypeKind::List(elem) = &c.ty.kind {
            // `const list<T> L = {..};` is a tuple of as many `T` (§7.2.10).
            self.list_decl(elem, Some(&c.value), c.value.span)?.1
        } else {
            let ty = self.ty(&c.ty)?;
            self.expr(&c.value, Some(&ty))?
        };
        // P4_16 §7.6: a constant of a `type`-declared type is of that type,
        // and takes a value of another only through a cast.
        self.check_declared_nominal(&c.ty, &e, c.value.span);
        let nominal = self.nominal_of_type(&c.ty);
        // Struct, header and tuple constants (`const S c = {a = 1, b = 2};`)
        // are compile-time known when each of their fields is (P4_16 §8.17).
        fn is_const(e: &ir::Expr) -> bool {
            match &e.kind {
                ir::ExprKind::Int(_)
                | ir::ExprKind::WideInt(_)
                | ir::ExprKind::Bool(_)
                | ir::ExprKind::ErrorCode(_)
                | ir::ExprKind::EnumMember(..) => true,
                // `{#}`: an invalid header or union is as known as `0`.
                ir::ExprKind::Default => matches!(e.ty, Ty::Composite(_)),
                ir::ExprKind::List(items) => {
                    !matches!(e.ty, Ty::Bit(_) | Ty::Int(_)) && items.iter().all(is_const)
                }
                _ => false,
            }
        }
        if !is_const(&e) {
            self.error_label(
                codes::NOT_CONSTANT,
                c.value.span,
                format!(
                    "the value of constant `{}` is not a compile-time constant",
                    c.name.name
                ),
                "not constant",
            );
            return None;
        }
        if c.name.name == "__v1model_version" {
            self.check_v1model_version(&e, c.value.span);
        }
        let value = match (&e.kind, &e.ty) {
            (ir::ExprKind::Bool(b), _) => Some(ir::ConstValue::Bool(*b)),
            // Program constants are exported as native integers: wide ones
            // stay inside the program.
            (ir::ExprKind::Int(v), ty) if ty.scalar_width(&self.prog).is_some_and(|w| w <= 128) => {
                let signed = ty.is_signed(&self.prog);
                ty.scalar_width(&self.prog).map(|width| {
                    if signed {
                        ir::ConstValue::Int {
                            width,
                            value: p4_target::bits::sext(*v, width),
                        }
                    } else {
                        ir::ConstValue::Bit { width, value: *v }
                    }
                })
            }
            _ => None,
        };
        self.declare(&c.name, Sym::Const(e, Some(nominal)));
        value
    }

    fn struct_like(&mut self, s: &ast::StructLikeDecl, kind: ir::CompositeKind) {
        // `@match(k)` on a field (a value set's struct, P4_16 §12.11.3)
        // names a match kind (p4c's issue1732: "value must be a match_kind").
        for f in &s.fields {
            if let Some(a) = ast::find_annotation(&f.annotations, "match") {
                let ok = match &a.body {
                    ast::AnnotationBody::Unstructured {
                        exprs: Some(exprs), ..
                    } => matches!(exprs.as_slice(), [e] if matches!(&e.kind,
                        ast::ExprKind::Name(p) if self.match_kinds.contains(&p.ident.name))),
                    _ => false,
                };
                if !ok {
                    self.error_label(
                        codes::BAD_MATCH_KIND,
                        a.span,
                        "`@match` takes the name of a match kind (`exact`, `ternary`, `lpm`...)",
                        "not a match kind",
                    );
                }
            }
        }
        if !s.type_params.is_empty() {
            // Generic: instantiated (monomorphised) at each use with type arguments.
            self.generics.insert(s.name.name.clone(), (s.clone(), kind));
            self.declare(&s.name, Sym::Generic(s.name.name.clone()));
            for f in &s.fields {
                self.check_type_names(&f.ty, &[&s.type_params]);
                // Whatever the type arguments, a tuple is neither a header
                // (a union's members) nor a header field's type.
                if kind != ir::CompositeKind::Struct && matches!(f.ty.kind, ast::TypeKind::Tuple(_))
                {
                    let what = if kind == ir::CompositeKind::Union {
                        "a header union's members must be headers"
                    } else {
                        "header fields must be bit strings or structs of them"
                    };
                    self.error_label(codes::TYPE_MISMATCH, f.ty.span, what, "a tuple");
                }
            }
            return;
        }
        if let Some(h) = self.composite(s, kind, s.name.name.clone()) {
            self.declare(&s.name, Sym::Type(Ty::Composite(h)));
        }
    }

    /// Reports unknown type names in the signature of a declaration that
    /// is otherwise only recorded (an extern, a parser/control/package
    /// type): p4c resolves every name where it is declared, used or not.
    fn check_param_types(
        &mut self,
        params: &[ast::Param],
        ret: Option<&ast::Type>,
        generic: &[&[ast::Ident]],
    ) {
        for t in ret.into_iter().chain(params.iter().map(|p| &p.ty)) {
            self.check_type_names(t, generic);
        }
        // `void` is only a whole return type: not a parameter's type, nor
        // part of one (p4c's extern-abstract-method-return-type-has-dont-care,
        // `abstract tuple<_, void> f(..)`); checked here on signatures that
        // may never be called.
        let parts = ret.into_iter().flat_map(type_arguments);
        for t in parts.chain(params.iter().map(|p| &p.ty)) {
            if let Some(v) = find_void(t) {
                self.error_label(
                    codes::TYPE_MISMATCH,
                    v.span,
                    "`void` is only the return type of a function returning nothing",
                    "not a type of values",
                );
            }
        }
        self.check_param_defaults(params);
        self.directionless_object_params(params);
        self.string_params(params);
        self.no_block_declaration_types(params);
    }

    /// A member named after its extern is a constructor (P4_16 §7.2.12.2),
    /// which has no return type and is not abstract: `extern X { void X(); }`
    /// is refused rather than read as a method `X` (p4c's constructor_e,
    /// "Constructor ... has a return type").
    fn no_method_named_like_extern(&mut self, e: &ast::ExternDecl) {
        for m in &e.members {
            if let ast::ExternMember::Method(f) = m
                && f.name.name == e.name.name
            {
                self.error_label(
                    codes::WRONG_KIND,
                    f.name.span,
                    format!(
                        "`{}` is named after its extern, so it is a constructor: a constructor \
                         has no return type and is not abstract",
                        f.name.name
                    ),
                    "a constructor declared as a method",
                );
            }
        }
    }

    /// An extern whose constructor or method takes or returns the extern
    /// itself (`extern E { void m(E e); }`) would be a self-referencing
    /// type; p4c refuses it ("Self-referencing types not supported",
    /// issue2544_self_ref), and so do we, on the declaration.
    fn no_self_reference(&mut self, e: &ast::ExternDecl) {
        let names_self = |t: &ast::Type| {
            matches!(&t.kind, ast::TypeKind::Named { name, .. }
                if !name.top_level && name.ident.name == e.name.name)
        };
        for m in &e.members {
            let (params, ret) = match m {
                ast::ExternMember::Constructor { params, .. } => (params, None),
                ast::ExternMember::Method(f) => (&f.params, Some(&f.return_type)),
            };
            for t in params.iter().map(|p| &p.ty).chain(ret) {
                if names_self(t) {
                    self.error_label(
                        codes::UNSUPPORTED,
                        t.span,
                        format!(
                            "not supported yet: extern `{}` referring to itself in its own methods",
                            e.name.name
                        ),
                        "self-referencing type",
                    );
                }
            }
        }
    }

    /// A parameter of an extern, parser, control or package type is an
    /// object, passed as a reference: it has no direction (P4_16 §6.8,
    /// p4c's issue3787: "a parameter with type Y cannot have a direction").
    /// Checked on signatures that have no body to refuse the type in
    /// (extern functions and methods, block and package types).
    fn directionless_object_params(&mut self, params: &[ast::Param]) {
        for p in params {
            if matches!(p.direction, ast::Direction::None) {
                continue;
            }
            let ast::TypeKind::Named { name, .. } = &p.ty.kind else {
                continue;
            };
            let object = matches!(
                self.lookup(name),
                Some(
                    Sym::ExternDecl(_)
                        | Sym::BlockType
                        | Sym::Control(_)
                        | Sym::Parser(_)
                        | Sym::CtorControl(_)
                )
            );
            if object {
                self.error_label(
                    codes::TYPE_MISMATCH,
                    p.span,
                    format!(
                        "parameter `{}` of type `{}` cannot have a direction: it is an object",
                        p.name.name, name.ident.name
                    ),
                    "remove the direction",
                );
            }
        }
    }

    /// P4_16 §7.1.5: a string is only ever a compile-time argument, so a
    /// parameter of type `string` takes no direction (p4c: "a parameter
    /// with type string cannot have a direction"), and no tuple holds one
    /// (p4c lays a tuple out as a struct, whose field "cannot have type
    /// 'string'"). Checked on signatures, which may never be called.
    fn string_params(&mut self, params: &[ast::Param]) {
        for p in params {
            if !matches!(p.direction, ast::Direction::None) && self.names_string(&p.ty) {
                self.error_label(
                    codes::TYPE_MISMATCH,
                    p.span,
                    format!(
                        "parameter `{}` of type `string` cannot have a direction: strings are \
                         only compile-time arguments",
                        p.name.name
                    ),
                    "remove the direction",
                );
            }
            if let Some(t) = find_tuple_string(&p.ty, |t| self.names_string(t)) {
                self.error_label(
                    codes::TYPE_MISMATCH,
                    t.span,
                    "a tuple element cannot be a `string`: strings are only compile-time arguments",
                    "a string in a tuple",
                );
            }
        }
    }

    /// Whether `t` is `string`, or a typedef of it.
    fn names_string(&self, t: &ast::Type) -> bool {
        match &t.kind {
            ast::TypeKind::String => true,
            ast::TypeKind::Named { name, args } => {
                args.is_empty() && matches!(self.lookup(name), Some(Sym::Type(Ty::Str)))
            }
            _ => false,
        }
    }

    /// A parameter's default value: of the parameter's type and known at
    /// compile time (P4_16 §6.8.3; p4c's issue3316 gives a function call,
    /// "expression must be a compile-time constant"). The checked value,
    /// when it is one.
    pub(crate) fn default_value(&mut self, d: &ast::Expr, ty: &Ty) -> Option<ir::Expr> {
        let x = self.expr(d, Some(ty))?;
        fn known(x: &ir::Expr) -> bool {
            use ir::ExprKind as K;
            match &x.kind {
                K::Int(_)
                | K::WideInt(_)
                | K::Bool(_)
                | K::ErrorCode(_)
                | K::EnumMember(..)
                | K::Default => true,
                K::List(xs) => xs.iter().all(known),
                K::Cast(e) => known(e),
                _ => false,
            }
        }
        if !known(&x) {
            self.error_label(
                codes::NOT_CONSTANT,
                d.span,
                "a default value must be a compile-time constant",
                "not a constant",
            );
            return None;
        }
        Some(x)
    }

    /// A default value stands in for an argument that is read (P4_16
    /// §6.8.2): only `in` and directionless parameters may have one, and
    /// not an `@optional` one, which has no value when left out (p4c's
    /// default-param test).
    pub(crate) fn check_param_defaults(&mut self, params: &[ast::Param]) {
        for p in params {
            let Some(d) = &p.default else { continue };
            let why = if matches!(p.direction, ast::Direction::Out | ast::Direction::InOut) {
                "only `in` and directionless parameters may have a default value"
            } else if ast::find_annotation(&p.annotations, "optional").is_some() {
                "an `@optional` parameter may not also have a default value"
            } else {
                continue;
            };
            self.error_label(codes::NOT_ALLOWED_HERE, d.span, why, "default value");
        }
    }

    /// Reports each name in `t` that is neither declared nor one of the
    /// type parameters `generic`.
    fn check_type_names(&mut self, t: &ast::Type, generic: &[&[ast::Ident]]) {
        use ast::TypeKind as K;
        match &t.kind {
            K::Named { name, args } => {
                for a in args {
                    self.check_type_names(a, generic);
                }
                let is_param = !name.top_level
                    && generic
                        .iter()
                        .any(|ps| ps.iter().any(|p| p.name == name.ident.name));
                if !is_param && self.lookup(name).is_none() {
                    self.error_label(
                        codes::UNKNOWN_NAME,
                        name.span,
                        format!("unknown type `{}`", name.ident.name),
                        "not declared",
                    );
                } else if !is_param
                    && args.is_empty()
                    && let Some(Sym::Generic(g)) = self.lookup(name).cloned()
                {
                    // p4c's issue3293: `extern t1 f();` for a generic `t1`.
                    self.error_label(
                        codes::ARG_COUNT,
                        name.span,
                        format!("`{g}` needs type arguments, e.g. `{g}<bit<8>>`"),
                        "generic type without type arguments",
                    );
                }
            }
            K::Stack { elem, .. } => self.check_type_names(elem, generic),
            K::Tuple(items) => {
                for i in items {
                    self.check_type_names(i, generic);
                }
            }
            _ => {}
        }
    }

    /// `S<args>` for a generic struct or header `S`.
    fn instantiate_generic(&mut self, name: &str, args: &[ast::Type], span: Span) -> Option<Ty> {
        let (decl, kind) = self.generics.get(name)?.clone();
        if args.len() != decl.type_params.len() {
            self.error_label(
                codes::ARG_COUNT,
                span,
                format!(
                    "`{name}` takes {} type argument(s), {} given",
                    decl.type_params.len(),
                    args.len()
                ),
                "wrong number of type arguments",
            );
            return None;
        }
        let mut tys = Vec::new();
        for a in args {
            tys.push(self.ty(a)?);
        }
        // A generic type may not be specialized with itself, however deep
        // (`h<h<bit>>`): p4c's "contains self as type argument" (issue3291),
        // the recursive types P4_16 has no values of.
        if let Some((a, _)) = args
            .iter()
            .zip(&tys)
            .find(|(_, t)| self.mentions_generic(t, name))
        {
            self.error_label(
                codes::TYPE_MISMATCH,
                a.span,
                format!("`{name}` cannot take an instance of itself as a type argument"),
                format!("an instance of `{name}`"),
            );
            return None;
        }
        let key = (name.to_string(), tys.clone());
        if let Some(t) = self.generic_cache.get(&key) {
            return Some(t.clone());
        }
        let full = format!(
            "{name}<{}>",
            tys.iter()
                .map(|t| self.ty_name(t))
                .collect::<Vec<_>>()
                .join(", ")
        );
        self.push_scope();
        for (p, t) in decl.type_params.iter().zip(&tys) {
            self.declare(p, Sym::Type(t.clone()));
        }
        let h = self.composite(&decl, kind, full);
        self.pop_scope();
        let ty = Ty::Composite(h?);
        self.generic_cache.insert(key, ty.clone());
        Some(ty)
    }

    /// Whether `t` is, or holds as a type argument, element or tuple item,
    /// an instance of generic struct or header `name`.
    fn mentions_generic(&self, t: &Ty, name: &str) -> bool {
        match t {
            Ty::Tuple(items) => items.iter().any(|i| self.mentions_generic(i, name)),
            Ty::Stack(e, _) => self.mentions_generic(e, name),
            Ty::Composite(_) => self.generic_cache.iter().any(|((n, args), v)| {
                v == t && (n == name || args.iter().any(|a| self.mentions_generic(a, name)))
            }),
            _ => false,
        }
    }

    /// The index of control `c`'s standard_metadata_t parameter.
    pub(crate) fn std_meta_param(&self, c: Handle<ir::Control>) -> Option<usize> {
        self.prog.controls[c].params.iter().position(|p| {
            matches!(&p.ty, Some(Ty::Composite(h))
                if self.prog.composites[*h].name == "standard_metadata_t")
        })
    }

    /// Checks that control `ctl` may use action `a`: one that needs the
    /// standard metadata implicitly needs a control that has it.
    pub(crate) fn check_action_use(
        &mut self,
        a: Handle<ir::Action>,
        ctl: Option<Handle<ir::Control>>,
        span: Span,
    ) {
        if !self.facts.implicit_std_meta_actions.contains(&a.index()) {
            return;
        }
        match ctl {
            // Used by another top-level action: that one needs it too.
            None => self.uses_implicit_std_meta = true,
            Some(c) if self.std_meta_param(c).is_some() => {}
            Some(_) => self.error_label(
                codes::NOT_ALLOWED_HERE,
                span,
                format!(
                    "action `{}` calls `mark_to_drop()`, which needs a control with a standard_metadata_t parameter",
                    self.prog.actions[a].name
                ),
                "used in a control without one",
            ),
        }
    }

    /// Builds a header, union or struct type named `name`.
    fn composite(
        &mut self,
        s: &ast::StructLikeDecl,
        kind: ir::CompositeKind,
        name: String,
    ) -> Option<Handle<ir::Composite>> {
        let mut fields: Vec<ir::Field> = Vec::new();
        let mut field_nominals: Vec<(u32, String)> = Vec::new();
        // Each declared field with its type; an array of scalars
        // (`bit<8>[16] a` or `bit<8> a[16]`) is its elements, fields named
        // `a[0]`..`a[15]` that `s.a[K]` names (see `Checker::array_element`).
        let mut declared: Vec<(&ast::Field, String, ast::Type)> = Vec::new();
        for f in &s.fields {
            if let ast::TypeKind::Stack { elem, size } = &f.ty.kind
                && kind != ir::CompositeKind::Union
                && matches!(
                    self.ty(elem),
                    Some(Ty::Bit(_) | Ty::Int(_) | Ty::Bool | Ty::SerEnum(_))
                )
            {
                let Some(n) = self.const_u32(size, "array size") else {
                    continue;
                };
                for i in 0..n {
                    declared.push((f, format!("{}[{i}]", f.name.name), (**elem).clone()));
                }
                continue;
            }
            declared.push((f, f.name.name.clone(), f.ty.clone()));
        }
        for (f, fname, fty) in declared {
            let Some(ty) = self.ty(&fty) else { continue };
            let rust_name = crate::proc::namer::field_ident(&fname);
            if fields
                .iter()
                .any(|x| x.name == fname || crate::proc::namer::field_ident(&x.name) == rust_name)
            {
                self.error(
                    codes::DUPLICATE,
                    f.name.span,
                    format!("field `{}` declared twice", f.name.name),
                );
                continue;
            }
            match (kind, &ty) {
                (
                    ir::CompositeKind::Header,
                    Ty::Bit(_) | Ty::Int(_) | Ty::Bool | Ty::SerEnum(_),
                ) => {}
                (ir::CompositeKind::Header, Ty::Varbit(w)) => {
                    if fields.iter().any(|x| matches!(x.ty, Ty::Varbit(_))) {
                        self.error(
                            codes::TYPE_MISMATCH,
                            f.span,
                            "a header may have at most one varbit field",
                        );
                        continue;
                    }
                    if w % 8 != 0 {
                        self.unsupported(
                            f.ty.span,
                            "varbit fields whose maximum is not a whole number of bytes",
                        );
                        continue;
                    }
                }
                // A struct of bit strings, laid out flattened (P4_16 v1.2.2+).
                (ir::CompositeKind::Header, Ty::Composite(sc))
                    if self.prog.composites[*sc].kind == ir::CompositeKind::Struct
                        && ty.serial_width(&self.prog).is_some() => {}
                (ir::CompositeKind::Header, _) => {
                    self.error(
                        codes::TYPE_MISMATCH,
                        f.ty.span,
                        format!(
                            "header fields must be bit strings or structs of them, not {}",
                            self.ty_name(&ty)
                        ),
                    );
                    continue;
                }
                (ir::CompositeKind::Union, Ty::Composite(h))
                    if self.prog.composites[*h].kind == ir::CompositeKind::Header => {}
                (ir::CompositeKind::Union, _) => {
                    self.error(
                        codes::TYPE_MISMATCH,
                        f.ty.span,
                        "header union members must be headers",
                    );
                    continue;
                }
                // P4_16 §7.1.5: a string is only ever a compile-time
                // argument; no struct holds one (p4c's string-e1).
                (_, Ty::Str) => {
                    self.error(
                        codes::TYPE_MISMATCH,
                        f.ty.span,
                        "a struct field cannot be a `string`: strings are only compile-time arguments",
                    );
                    continue;
                }
                (_, Ty::Void) => {
                    self.error(
                        codes::TYPE_MISMATCH,
                        f.ty.span,
                        "a field cannot be `void`: `void` is only the return type of a function \
                         returning nothing",
                    );
                    continue;
                }
                _ => {}
            }
            let mut field_lists = Vec::new();
            for a in &f.annotations {
                if a.name.name == "field_list"
                    && let ast::AnnotationBody::Unstructured {
                        exprs: Some(es), ..
                    } = &a.body
                {
                    for e in es {
                        if let ast::ExprKind::Int(i) = &e.kind
                            && i.value < 256
                        {
                            field_lists.push(i.value as u8);
                        }
                    }
                }
            }
            if let Some(n) = self.nominal_of_type(&fty) {
                field_nominals.push((fields.len() as u32, n));
            }
            fields.push(ir::Field {
                name: fname,
                ty,
                field_lists,
                span: f.span,
            });
        }
        let controller_header = ast::find_annotation(&s.annotations, "controller_header")
            .and_then(|a| a.string_arg().map(|s| s.to_string()));
        let mut comp = ir::Composite {
            name,
            kind,
            fields,
            controller_header,
            padded: false,
        };
        let bits = comp.header_bits(&self.prog);
        if kind == ir::CompositeKind::Header && !bits.is_multiple_of(8) {
            if comp.varbit().is_some() {
                self.error(
                    codes::BAD_WIDTH,
                    s.name.span,
                    format!(
                        "header `{}` is {bits} bits long; headers with a varbit field must be a whole number of bytes",
                        s.name.name,
                    ),
                );
            } else {
                // p4c pads such a header for BMv2 with a last field up to
                // the next byte: it takes whole bytes on the wire, and the
                // padding bits are extracted and emitted as they came.
                let mut pad = "_padding".to_string();
                while comp.fields.iter().any(|f| f.name == pad) {
                    pad.push('_');
                }
                comp.fields.push(ir::Field {
                    name: pad,
                    ty: Ty::Bit(8 - bits % 8),
                    field_lists: Vec::new(),
                    span: s.name.span,
                });
                comp.padded = true;
            }
        }
        let h = self.prog.composites.append(comp, s.span);
        for (i, n) in field_nominals {
            self.field_nominal.insert((h.index(), i), n);
        }
        Some(h)
    }

    /// For a field of a header or struct, the `type`-declared type it was
    /// declared with (`Some(None)` for any other type); `None` for other
    /// expressions.
    pub(crate) fn nominal_field(&self, e: &ir::Expr) -> Option<Option<String>> {
        match &e.kind {
            ir::ExprKind::Var(_) => self.var_nominal.get(&e.span).cloned(),
            ir::ExprKind::Member(base, i) if matches!(base.ty, Ty::Composite(_)) => {
                let Ty::Composite(h) = &base.ty else {
                    return None;
                };
                Some(self.field_nominal.get(&(h.index(), *i)).cloned())
            }
            // A cast or a call says its type; an operator's result is of a
            // plain type (no operator but `==`/`!=` takes a `type`).
            _ if self.expr_nominal.contains_key(&e.span) => {
                Some(self.expr_nominal[&e.span].clone())
            }
            ir::ExprKind::Binary(..) | ir::ExprKind::Unary(..) | ir::ExprKind::Slice(..) => {
                Some(None)
            }
            _ => None,
        }
    }

    /// The parameters of an action or function with their declared types
    /// for the nominal checks of arguments.
    pub(crate) fn param_specs(&self, params: &[ast::Param]) -> Vec<ParamSpec> {
        let mut specs = ParamSpec::of(params);
        for (s, p) in specs.iter_mut().zip(params) {
            s.nominal = Some(self.nominal_of_type(&p.ty));
        }
        specs
    }

    /// The `type`-declared type an AST type names, if any.
    pub(crate) fn nominal_of_type(&self, t: &ast::Type) -> Option<String> {
        match &t.kind {
            ast::TypeKind::Named { name, args } if args.is_empty() => {
                self.nominal_types.get(&name.ident.name).cloned()
            }
            _ => None,
        }
    }

    /// For a `tuple<..>` as written, each element's `type`-declared type
    /// (`None` for a plain one); empty for other types. Reading an element
    /// (`t[0]`) gives a value of its element's type (P4_16 §7.6).
    pub(crate) fn tuple_nominals(&self, t: &ast::Type) -> Vec<Option<String>> {
        match &t.kind {
            ast::TypeKind::Tuple(items) => items.iter().map(|i| self.nominal_of_type(i)).collect(),
            _ => Vec::new(),
        }
    }

    /// Records the element types of local `name`, just declared with type
    /// `t`, for the nominal checks of its elements ([`Self::tuple_nominals`]).
    pub(crate) fn note_tuple_nominals(&mut self, name: &ast::Ident, t: &ast::Type) {
        let elems = self.tuple_nominals(t);
        if elems.is_empty() {
            return;
        }
        if let Some(Sym::Var(.., e)) = self.scopes.last_mut().and_then(|s| s.get_mut(&name.name)) {
            *e = elems;
        }
    }

    /// P4_16 §7.6: a type introduced by `type` is a new type; a value of it
    /// and a value of another type (its underlying one included) are not
    /// assigned or compared without a cast. Checked where both sides are
    /// fields of headers or structs, whose declared types are known: a
    /// field of type `T` is `Some("T")`, of a plain type `None`.
    pub(crate) fn check_nominal(&mut self, a: &ir::Expr, b: &ir::Expr, span: Span, what: &str) {
        let x = self.nominal_field(a);
        self.check_nominal_with(x, a, b, span, what);
    }

    /// The nominal check of a declaration `T x = init;` with `T` as
    /// written: a `tuple<..>` initialised with a list is checked element by
    /// element (`tuple<Port_t, bit<8>> t = { p, 1 }`).
    pub(crate) fn check_declared_nominal(&mut self, ty: &ast::Type, init: &ir::Expr, span: Span) {
        if let (ast::TypeKind::Tuple(tys), ir::ExprKind::List(items)) = (&ty.kind, &init.kind)
            && tys.len() == items.len()
        {
            for (t, x) in tys.iter().zip(items) {
                self.check_declared_nominal(t, x, x.span);
            }
            return;
        }
        let declared = self.nominal_of_type(ty);
        self.check_nominal_against(&declared, init, span, "assign");
    }

    /// The nominal check of a value against a declared type: an
    /// initializer (`what` "assign") or an argument ("pass").
    pub(crate) fn check_nominal_against(
        &mut self,
        declared: &Option<String>,
        value: &ir::Expr,
        span: Span,
        what: &str,
    ) {
        let decl = ir::Expr {
            kind: ir::ExprKind::Bool(false),
            ty: value.ty.clone(),
            span,
        };
        self.check_nominal_with(Some(declared.clone()), &decl, value, span, what);
    }

    fn check_nominal_with(
        &mut self,
        x: Option<Option<String>>,
        a: &ir::Expr,
        b: &ir::Expr,
        span: Span,
        what: &str,
    ) {
        if let (Some(x), Some(y)) = (x, self.nominal_field(b))
            && x != y
        {
            let name = |n: &Option<String>, e: &ir::Expr, c: &Checker| match n {
                Some(n) => n.clone(),
                None => c.ty_name(&e.ty),
            };
            let (xn, yn) = (name(&x, a, self), name(&y, b, self));
            let msg = match what {
                "assign" => format!("cannot assign {yn} to {xn} without a cast"),
                "pass" => format!("cannot pass {yn} as {xn} without a cast"),
                "return" => format!("cannot return {yn} as {xn} without a cast"),
                _ => format!("cannot {what} {xn} with {yn} without a cast"),
            };
            self.error_label(
                codes::TYPE_MISMATCH,
                span,
                format!("{msg}: `type` declares a new type"),
                "cast one side, e.g. `(T)x`",
            );
        }
    }

    /// A serializable enum member's integer value fits the underlying type
    /// (P4_16 §8.3; p4c's serenum-typedef: "Serialized enum constant value
    /// 128 is out of bounds of the underlying type"). A value with a type of
    /// its own (`(I8)4*4*4*4`) wraps as any such value does. Returns false
    /// after reporting an error.
    fn enum_value_fits(&mut self, ty: &Ty, v: &ast::Expr) -> bool {
        let before = self.diags.len();
        let Some(expr::TE::Inf(n)) = self.expr_any(v) else {
            return self.diags.len() == before;
        };
        let (lo, hi, w) = match ty {
            Ty::Bit(w) => (0i128, (1i128 << (*w).min(126)) - 1, *w),
            Ty::Int(w) => (
                -(1i128 << w.saturating_sub(1).min(126)) + i128::from(*w == 0),
                (1i128 << w.saturating_sub(1).min(126)) - 1,
                *w,
            ),
            _ => return true,
        };
        if w > 126 || (lo..=hi).contains(&n) {
            return true;
        }
        self.error_label(
            codes::OVERFLOW,
            v.span,
            format!("enum value {n} does not fit {}", self.ty_name(ty)),
            "out of range",
        );
        false
    }

    fn enum_decl(&mut self, e: &ast::EnumDecl) {
        let repr = match &e.underlying {
            Some(t) if let Some(n) = self.nominal_of_type(t) => {
                // P4_16 §8.3: the underlying type is a bit string; a `type`
                // over one is a new type (p4c's serenum-type: "Illegal type
                // for enum; only bit<> and int<> are allowed").
                self.error_label(
                    codes::TYPE_MISMATCH,
                    t.span,
                    "a serializable enum needs a bit<W> or int<W> type",
                    format!("`{n}` is a new type declared by `type`"),
                );
                return;
            }
            Some(t) => match self.ty(t) {
                Some(ty @ (Ty::Bit(_) | Ty::Int(_))) => Some(ty),
                Some(_) => {
                    self.error(
                        codes::TYPE_MISMATCH,
                        t.span,
                        "a serializable enum needs a bit<W> or int<W> type",
                    );
                    return;
                }
                None => return,
            },
            None => None,
        };
        let mut members = Vec::new();
        for (i, m) in e.members.iter().enumerate() {
            let v = match (&repr, &m.value) {
                (Some(ty), Some(v)) if !self.enum_value_fits(ty, v) => 0,
                (Some(ty), Some(v)) => match self.expr(v, Some(ty)) {
                    Some(ex) => match fold::const_int(&ex) {
                        Some(c) => c,
                        None => {
                            self.error(
                                codes::NOT_CONSTANT,
                                v.span,
                                "enum values must be constants",
                            );
                            0
                        }
                    },
                    None => 0,
                },
                (Some(_), None) => {
                    self.error(
                        codes::NOT_CONSTANT,
                        m.span,
                        "members of a serializable enum need a value",
                    );
                    0
                }
                (None, _) => i as u128,
            };
            if members.iter().any(|(n, _)| *n == m.name.name) {
                self.error(
                    codes::DUPLICATE,
                    m.span,
                    format!("enum member `{}` declared twice", m.name.name),
                );
            }
            members.push((m.name.name.clone(), v));
        }
        let serial = repr.is_some();
        let h = self.prog.enums.append(
            ir::EnumDecl {
                name: e.name.name.clone(),
                repr,
                members,
            },
            e.span,
        );
        let ty = if serial { Ty::SerEnum(h) } else { Ty::Enum(h) };
        self.declare(&e.name, Sym::Type(ty));
    }

    /// The plain enum whose members are the match kinds declared so far
    /// (later ones are added as declared): values of type `match_kind`
    /// (P4_16 §7.1.3) are held as a member's index, as enum values are, so
    /// they compare, fill tuples and reach user externs as `u32` codes.
    /// Made at the first use, so programs without one are unchanged.
    pub(crate) fn match_kind_enum(&mut self, span: Span) -> Handle<ir::EnumDecl> {
        if let Some(h) = self.match_kind_enum {
            return h;
        }
        let members = self
            .match_kinds
            .iter()
            .enumerate()
            .map(|(i, m)| (m.clone(), i as u128))
            .collect();
        let h = self.prog.enums.append(
            ir::EnumDecl {
                name: "match_kind".into(),
                repr: None,
                members,
            },
            span,
        );
        self.match_kind_enum = Some(h);
        h
    }

    /// Reports a name given twice among `groups` (type parameters, then
    /// parameter lists): they share one scope (P4_16 §6.5; p4c's dup-param
    /// and decl-*-with-duplicate-parameter-names tests). With `across_only`
    /// a repeat inside one group is left to the scope it is declared in.
    fn unique_param_names(&mut self, groups: &[Vec<&ast::Ident>], across_only: bool) {
        let mut seen: Vec<(&str, usize)> = Vec::new();
        for (g, group) in groups.iter().enumerate() {
            for id in group {
                let dup = seen
                    .iter()
                    .any(|(n, k)| *n == id.name && (!across_only || *k != g));
                if dup {
                    self.error_label(
                        codes::DUPLICATE,
                        id.span,
                        format!("`{}` names two parameters of one declaration", id.name),
                        "second declaration",
                    );
                } else {
                    seen.push((id.name.as_str(), g));
                }
            }
        }
    }

    /// A parser's or control's type parameters, parameters and constructor
    /// parameters are one scope; repeats within the parameters are reported
    /// when they are declared.
    fn block_param_names(&mut self, sig: &ast::TypeDeclSignature, ctor: &[ast::Param]) {
        let groups = [
            names(&sig.type_params),
            param_names(&sig.params),
            param_names(ctor),
        ];
        self.unique_param_names(&groups, true);
        self.check_param_defaults(&sig.params);
        self.check_param_defaults(ctor);
        self.no_block_declaration_types(&sig.params);
        self.no_block_declaration_types(ctor);
    }

    /// A parameter's type is a type: a parser or control *declaration*
    /// (one with a body) is not one, its type is declared apart, without a
    /// body (`control X(); control C()(X x)`; p4c's spec-issue563:
    /// "parameter cannot have type control A").
    fn no_block_declaration_types(&mut self, params: &[ast::Param]) {
        for p in params {
            let ast::TypeKind::Named { name, .. } = &p.ty.kind else {
                continue;
            };
            let kind = match self.lookup(name) {
                Some(Sym::Control(_) | Sym::CtorControl(_)) => "control",
                Some(Sym::Parser(_) | Sym::CtorParser(_)) => "parser",
                _ => continue,
            };
            self.error_label(
                codes::WRONG_KIND,
                p.ty.span,
                format!(
                    "parameter `{}` cannot have the type of {kind} `{}`: declare a {kind} type without a body and use that",
                    p.name.name, name.ident.name
                ),
                format!("a {kind} declaration, not a type"),
            );
        }
    }

    /// A control's constructor parameters may not be parsers, nor a
    /// parser's controls: a constructor parameter is instantiated in the
    /// block, and P4_16's rules of where objects may be instantiated let
    /// parsers hold parser instances only and controls control instances
    /// only (p4c's issue1331: "instantiation of parser in control").
    fn no_block_ctor_params(&mut self, ctor: &[ast::Param], in_parser: bool) {
        for p in ctor {
            let ast::TypeKind::Named { name, .. } = &p.ty.kind else {
                continue;
            };
            let (wrong, what, block) = if in_parser {
                (&self.control_type_names, "control", "parser")
            } else {
                (&self.parser_type_names, "parser", "control")
            };
            if wrong.contains(&name.ident.name) {
                self.error_label(
                    codes::NOT_ALLOWED_HERE,
                    p.name.span,
                    format!("`{}`: instantiation of a {what} in a {block}", p.name.name),
                    format!("a {what} cannot be a {block}'s constructor parameter"),
                );
            }
        }
    }

    /// Methods (and constructors) of extern `e` overload by their number of
    /// parameters or by their parameter names (P4_16 §7.2.12; p4c's
    /// issue5253_legal_overloads): two of one name with the same number of
    /// parameters and the same names could not be told apart by any call.
    fn check_overloads(&mut self, e: &ast::ExternDecl) {
        let mut seen: Vec<(&str, Vec<&str>)> = Vec::new();
        for m in &e.members {
            let (name, params) = match m {
                ast::ExternMember::Constructor { name, params, .. } => {
                    self.unique_param_names(&[param_names(params)], false);
                    // An instantiation picks its constructor by arity only.
                    if let Some((_, other)) = seen
                        .iter()
                        .find(|(n, qs)| *n == name.name && qs.len() == params.len())
                        && !params.iter().all(|p| other.contains(&p.name.name.as_str()))
                    {
                        self.unsupported(
                            name.span,
                            &format!(
                                "constructors of one arity told apart by their parameter names \
                                 (`{}`)",
                                e.name.name
                            ),
                        );
                        continue;
                    }
                    (name, params)
                }
                ast::ExternMember::Method(f) => {
                    let groups = [names(&f.type_params), param_names(&f.params)];
                    self.unique_param_names(&groups, false);
                    (&f.name, &f.params)
                }
            };
            let ps: Vec<&str> = params.iter().map(|p| p.name.name.as_str()).collect();
            let same = |(m, qs): &(&str, Vec<&str>)| {
                *m == name.name && qs.len() == ps.len() && ps.iter().all(|p| qs.contains(p))
            };
            if seen.iter().any(same) {
                self.error_label(
                    codes::DUPLICATE,
                    name.span,
                    format!(
                        "extern `{}` declares `{}({})` twice: methods of one name must differ in \
                         their number of parameters or in their parameter names, so that a call \
                         can choose",
                        e.name.name,
                        name.name,
                        ps.join(", ")
                    ),
                    "ambiguous",
                );
            } else {
                seen.push((name.name.as_str(), ps));
            }
        }
    }

    /// Creates the instance tree of control `c` at `path`; `passed` are the
    /// instances (indices into `Program::instances`) given to its
    /// control-typed constructor parameters.
    fn instantiate(&mut self, c: Handle<ir::Control>, path: String, passed: &[u32]) -> u32 {
        let idx = self.prog.instances.len() as u32;
        self.prog.instances.push(ir::ControlInstance {
            path: path.clone(),
            control: c,
            sub: Vec::new(),
        });
        let subs = self.prog.controls[c].instances.clone();
        let mut sub_idx: Vec<u32> = Vec::new();
        for (j, (name, sc)) in subs.into_iter().enumerate() {
            let key = (c.index(), j as u32);
            if let Some(&k) = self.instance_aliases.get(&key) {
                match passed.get(k) {
                    Some(&i) => sub_idx.push(i),
                    None => {
                        self.bug(
                            self.prog.controls.span(c),
                            "constructor instance not passed",
                        );
                        return idx;
                    }
                }
                continue;
            }
            let local = self.instance_args.get(&key).cloned().unwrap_or_default();
            let args: Option<Vec<u32>> = local
                .iter()
                .map(|l| sub_idx.get(*l as usize).copied())
                .collect();
            let Some(args) = args else {
                self.bug(
                    self.prog.controls.span(c),
                    "constructor instance passed before it exists",
                );
                return idx;
            };
            sub_idx.push(self.instantiate(sc, format!("{path}.{name}"), &args));
        }
        self.prog.instances[idx as usize].sub = sub_idx;
        idx
    }

    pub(crate) fn function_decl(&mut self, f: &ast::FunctionDecl) {
        let has_list_params = f.params.iter().any(|p| is_list_type(&p.ty));
        let has_int_params = blocks::split_int_params(&f.params).is_some();
        if !f.type_params.is_empty() || has_list_params || has_int_params {
            // Monomorphised: checked once per distinct list of type
            // arguments and of values for its directionless `int`
            // parameters (P4_16 §6.8: each call passes a compile-time known
            // value), at the calls ([`Self::instantiate_generic_fn`]), in
            // the scopes of its declaration. A `list<T>` parameter takes
            // its length from its argument (P4_16 §7.2.10), so a function
            // with one is instantiated per list of lengths too.
            let before = self.diags.len();
            self.check_param_types(&f.params, Some(&f.return_type), &[&f.type_params]);
            // An overload of a generic function of the same name is kept
            // under a key of its own (its arity tells them apart).
            let mut key = f.name.name.clone();
            if self.generic_fns.contains_key(&key) {
                key = format!("{key}/{}", f.params.len());
            }
            self.generic_fns
                .insert(key.clone(), (f.clone(), self.scopes.clone()));
            // A list parameter's length, unknown before a call, is no
            // type a trial could stand in for (`l[2]` is valid or not by
            // it): such a function is checked at its calls only.
            if self.diags.len() == before && !has_list_params {
                self.trial_generic_fn(f, &key);
            }
            self.declare(&f.name, Sym::GenericFunction(key));
            return;
        }
        if let Some(h) = self.function_body(f) {
            self.declare(&f.name, Sym::Function(h));
        }
    }

    /// Type-checks generic function `f` at its declaration, as p4c does,
    /// with each type parameter bound to an opaque type (an empty struct of
    /// its name): only what any type allows (copying, passing on) checks.
    /// The IR is thrown away; the diagnostics are reported only if the
    /// function is never called (a call checks it with its real types).
    fn trial_generic_fn(&mut self, f: &ast::FunctionDecl, key: &str) {
        let before = self.diags.len();
        self.discarding_changes(|c| {
            c.push_scope();
            c.declare_opaque_types(&f.type_params);
            // Each `int` parameter a placeholder value, as a block's
            // constructor parameter gets in its trial.
            let placeholders = blocks::split_int_params(&f.params)
                .map_or_else(Vec::new, |(_, ints, _)| vec![1; ints.len()]);
            let f = c.bind_int_params(f, &placeholders);
            c.function_body(&f);
            c.pop_scope();
        });
        let diags = self.diags.split_off(before);
        self.ctor_trials.push((key.to_string(), diags));
    }

    /// Function `f` without its directionless `int` parameters, each
    /// declared in the innermost scope as the `int` constant `values` gives
    /// it, in order: the body reads it as one (`bit<k>`, `x + n`).
    fn bind_int_params(&mut self, f: &ast::FunctionDecl, values: &[i128]) -> ast::FunctionDecl {
        let mut f = f.clone();
        if let Some((_, ints, rest)) = blocks::split_int_params(&f.params) {
            for (p, v) in ints.iter().zip(values) {
                self.declare(&p.name, Sym::IntConst(*v));
            }
            f.params = rest;
        }
        f
    }

    /// One opaque type per type parameter, for checking a generic
    /// declaration at its declaration as p4c does: an empty struct of the
    /// parameter's name, so only what any type allows (copying, passing
    /// on) checks. Call it inside [`Self::discarding_changes`].
    fn opaque_types(&mut self, type_params: &[ast::Ident]) -> Vec<Ty> {
        type_params
            .iter()
            .map(|t| {
                let h = self.prog.composites.append(
                    ir::Composite {
                        name: t.name.clone(),
                        kind: ir::CompositeKind::Struct,
                        fields: Vec::new(),
                        controller_header: None,
                        padded: false,
                    },
                    t.span,
                );
                self.opaque_composites.insert(h.index());
                Ty::Composite(h)
            })
            .collect()
    }

    /// Declares each of `type_params` in the innermost scope as an opaque
    /// type ([`Self::opaque_types`]), which it returns.
    pub(crate) fn declare_opaque_types(&mut self, type_params: &[ast::Ident]) -> Vec<Ty> {
        let tys = self.opaque_types(type_params);
        for (t, ty) in type_params.iter().zip(&tys) {
            self.declare(t, Sym::Type(ty.clone()));
        }
        tys
    }

    /// Files the diagnostics reported since `before` as the trial check of
    /// generic declaration `name`, reported only if nothing instantiates
    /// it. What our target cannot do yet with an opaque type (a
    /// `register<T>`) is no error of the program's (p4c's front end takes
    /// it, and only instantiations reach a target), and what follows from
    /// it is noise: such a trial proves nothing, and is dropped.
    pub(crate) fn keep_trial(&mut self, name: &str, before: usize) {
        let mut diags = self.diags.split_off(before);
        if diags.iter().any(|d| d.code == codes::UNSUPPORTED) {
            diags.clear();
        }
        self.ctor_trials.push((name.to_string(), diags));
    }

    /// Runs `check`, then puts back everything it changed except the
    /// diagnostics: the IR, the facts and every cache. Trial checks of a
    /// declaration (generic, or with constructor parameters) use it: only
    /// its real instantiations generate code.
    pub(crate) fn discarding_changes(&mut self, check: impl FnOnce(&mut Self)) {
        let saved = (
            self.prog.clone(),
            self.facts.clone(),
            self.generic_cache.clone(),
            self.ctor_cache.clone(),
            self.ctor_parser_cache.clone(),
            self.generic_fn_cache.clone(),
            self.ctor_used.clone(),
            self.instantiated_controls.clone(),
            self.action_params.clone(),
            self.function_params.clone(),
            self.function_ret_nominal.clone(),
            self.instance_args.clone(),
            self.instance_aliases.clone(),
            self.extern_params.clone(),
            self.opaque_composites.clone(),
        );
        check(self);
        (
            self.prog,
            self.facts,
            self.generic_cache,
            self.ctor_cache,
            self.ctor_parser_cache,
            self.generic_fn_cache,
            self.ctor_used,
            self.instantiated_controls,
            self.action_params,
            self.function_params,
            self.function_ret_nominal,
            self.instance_args,
            self.instance_aliases,
            self.extern_params,
            self.opaque_composites,
        ) = saved;
    }

    /// The instance of generic function `name` for the type arguments of a
    /// call: `type_args` if given, else inferred from the arguments passed
    /// to parameters whose type is a bare type parameter (`in T x`).
    pub(crate) fn instantiate_generic_fn(
        &mut self,
        name: &str,
        type_args: &[ast::Type],
        args: &[&ast::Expr],
        span: Span,
    ) -> Option<Handle<ir::Function>> {
        self.ctor_used.insert(name.to_string());
        let (decl, scopes) = self.generic_fns.get(name)?.clone();
        let what = format!("function `{}`", decl.name.name);
        let (tys, nominals) = self.type_args_and_nominals_of_call(
            &what,
            &decl.name.name,
            &decl.type_params,
            &decl.params,
            type_args,
            args,
            span,
        )?;
        let lists = self.list_args_of_call(&decl, &tys, args)?;
        let mut int_values = Vec::new();
        if let Some((positions, ints, _)) = blocks::split_int_params(&decl.params) {
            if !self.arg_count(span, &what, decl.params.len(), args.len()) {
                return None;
            }
            for (i, p) in positions.iter().zip(&ints) {
                int_values.push(self.int_arg(p, args[*i], "parameter")?);
            }
        }
        let mut key = (
            name.to_string(),
            tys.clone(),
            nominals.clone(),
            int_values.clone(),
        );
        key.1.extend(lists.iter().map(|(_, ty)| ty.clone()));
        key.2.extend(lists.iter().map(|_| None));
        if let Some(h) = self.generic_fn_cache.get(&key) {
            return Some(*h);
        }
        let decl = with_list_params_named(decl);
        let saved_scopes = std::mem::replace(&mut self.scopes, scopes);
        self.push_scope();
        for (t, ty) in decl.type_params.iter().zip(tys) {
            self.declare(t, Sym::Type(ty));
        }
        for (t, ty) in lists {
            self.declare(&t, Sym::Type(ty));
        }
        let decl = self.bind_int_params(&decl, &int_values);
        // P4_16 §7.6: a type parameter bound to a `type`-declared type
        // stands for that type in the signature and the body (`T id<T>(in
        // T x)` called with a `Port_t` takes and returns a `Port_t`); the
        // parameter's name hides any `type` of the same name meanwhile.
        let mut hidden = Vec::new();
        for (t, n) in decl.type_params.iter().zip(&nominals) {
            let old = match n {
                Some(n) => self.nominal_types.insert(t.name.clone(), n.clone()),
                None => self.nominal_types.remove(&t.name),
            };
            hidden.push((t.name.clone(), old));
        }
        let h = self.function_body(&decl);
        for (t, old) in hidden.into_iter().rev() {
            match old {
                Some(n) => self.nominal_types.insert(t, n),
                None => self.nominal_types.remove(&t),
            };
        }
        self.scopes = saved_scopes;
        if let Some(h) = h {
            self.generic_fn_cache.insert(key, h);
        }
        h
    }

    /// The tuple type each `list<T>` parameter of function `decl` takes
    /// at a call (its argument's: a list expression of `T`s, or a list
    /// value), with the name [`with_list_params_named`] gives that type;
    /// `tys` are the call's type arguments, which `T` may name. `None`
    /// after an error.
    fn list_args_of_call(
        &mut self,
        decl: &ast::FunctionDecl,
        tys: &[Ty],
        args: &[&ast::Expr],
    ) -> Option<Vec<(ast::Ident, Ty)>> {
        let mut lists = Vec::new();
        self.push_scope();
        for (t, ty) in decl.type_params.iter().zip(tys) {
            self.declare(t, Sym::Type(ty.clone()));
        }
        for (p, a) in decl.params.iter().zip(args) {
            let ast::TypeKind::List(elem) = &p.ty.kind else {
                continue;
            };
            let ty = match p.direction {
                ast::Direction::Out | ast::Direction::InOut => {
                    let Some(x) = self.lvalue(a) else { break };
                    if !self.is_list_of(elem, &x.ty) {
                        let found = self.ty_name(&x.ty);
                        self.error_label(
                            codes::TYPE_MISMATCH,
                            a.span,
                            format!(
                                "this {found} is not a list of the element type of `{}`",
                                p.name.name
                            ),
                            "wrong element type",
                        );
                        break;
                    }
                    x.ty
                }
                _ => match self.list_decl(elem, Some(a), a.span) {
                    Some((ty, _)) => ty,
                    None => break,
                },
            };
            lists.push((list_param_type_name(&p.name), ty));
        }
        self.pop_scope();
        let n = decl.params.iter().filter(|p| is_list_type(&p.ty)).count();
        (lists.len() == n).then_some(lists)
    }

    /// The type of the first typed element of list argument `a` (a list
    /// expression or a list value), which a `list<T>` parameter takes as
    /// its `T`.
    fn list_element_type(&mut self, a: &ast::Expr) -> Option<Ty> {
        if let ast::ExprKind::List(items) = &a.kind {
            return items.iter().find_map(|i| match self.expr_any(i)? {
                expr::TE::Typed(x) => Some(x.ty),
                expr::TE::Inf(_) => None,
            });
        }
        match self.expr(a, None)?.ty {
            Ty::Tuple(items) => items.first().cloned(),
            _ => None,
        }
    }

    /// The type arguments of a call of a generic function or extern
    /// (`what`, called as `name`): the ones given, or each inferred from the
    /// first argument passed to a parameter of exactly that type.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn type_args_of_call(
        &mut self,
        what: &str,
        name: &str,
        type_params: &[ast::Ident],
        params: &[ast::Param],
        type_args: &[ast::Type],
        args: &[&ast::Expr],
        span: Span,
    ) -> Option<Vec<Ty>> {
        self.type_args_and_nominals_of_call(what, name, type_params, params, type_args, args, span)
            .map(|(tys, _)| tys)
    }

    /// [`Self::type_args_of_call`], with the `type`-declared type each type
    /// argument is (written, or that of the argument it was inferred from).
    #[allow(clippy::too_many_arguments)]
    fn type_args_and_nominals_of_call(
        &mut self,
        what: &str,
        name: &str,
        type_params: &[ast::Ident],
        params: &[ast::Param],
        type_args: &[ast::Type],
        args: &[&ast::Expr],
        span: Span,
    ) -> Option<(Vec<Ty>, Vec<Option<String>>)> {
        let n = type_params.len();
        if !type_args.is_empty() {
            if type_args.len() != n {
                self.error_label(
                    codes::ARG_COUNT,
                    span,
                    format!(
                        "{what} takes {n} type argument(s), {} given",
                        type_args.len()
                    ),
                    "wrong number of type arguments",
                );
                return None;
            }
            let nominals = type_args.iter().map(|t| self.nominal_of_type(t)).collect();
            let tys = type_args
                .iter()
                .map(|t| self.ty(t))
                .collect::<Option<_>>()?;
            return Some((tys, nominals));
        }
        let mut inferred: Vec<Option<Ty>> = vec![None; n];
        let mut nominals: Vec<Option<String>> = vec![None; n];
        for (p, a) in params.iter().zip(args) {
            // `list<T> l`: T is the type of the list's elements.
            let (ty, in_list) = match &p.ty.kind {
                ast::TypeKind::List(elem) => (&**elem, true),
                _ => (&p.ty, false),
            };
            let ast::TypeKind::Named {
                name: tn,
                args: targs,
            } = &ty.kind
            else {
                continue;
            };
            let Some(k) = type_params.iter().position(|t| t.name == tn.ident.name) else {
                continue;
            };
            if !targs.is_empty() || tn.top_level || inferred[k].is_some() {
                continue;
            }
            if in_list {
                inferred[k] = self.list_element_type(a);
                continue;
            }
            let x = match p.direction {
                ast::Direction::Out | ast::Direction::InOut => self.lvalue(a)?,
                _ => self.expr(a, None)?,
            };
            nominals[k] = self.nominal_field(&x).flatten();
            inferred[k] = Some(x.ty);
        }
        let mut tys = Vec::new();
        for (t, ty) in type_params.iter().zip(inferred) {
            match ty {
                Some(ty) => tys.push(ty),
                None => {
                    // The example gives as many type arguments as it takes.
                    let example = vec!["bit<8>"; n].join(", ");
                    self.error_label(
                        codes::TYPE_MISMATCH,
                        span,
                        format!(
                            "cannot infer type argument `{}` of {what}; give it, e.g. `{name}<{example}>(...)`",
                            t.name
                        ),
                        "type arguments needed",
                    );
                    return None;
                }
            }
        }
        Some((tys, nominals))
    }

    /// Checks function `f` (type parameters, if any, already bound) into a
    /// new IR function.
    fn function_body(&mut self, f: &ast::FunctionDecl) -> Option<Handle<ir::Function>> {
        let ret = match &f.return_type.kind {
            ast::TypeKind::Void => Ty::Void,
            _ => self.storable_ty(&f.return_type, "a function's result")?,
        };
        self.push_scope();
        let mut vars = Vec::new();
        for (i, p) in f.params.iter().enumerate() {
            if matches!(p.ty.kind, ast::TypeKind::Int) {
                // Directionless ones are bound per call before the body is
                // checked ([`Self::bind_int_params`]).
                self.error_label(
                    codes::TYPE_MISMATCH,
                    p.span,
                    format!(
                        "parameter `{}` is an `int`: it must be directionless, and each call \
                         passes a compile-time known value (P4_16 §6.8)",
                        p.name.name
                    ),
                    "remove the direction",
                );
                continue;
            }
            let Some(ty) = self.storable_ty(&p.ty, "a function parameter") else {
                continue;
            };
            if let Some(d) = &p.default {
                self.default_value(d, &ty);
            }
            let dir = match p.direction {
                ast::Direction::Out => ir::Direction::Out,
                ast::Direction::InOut => ir::Direction::InOut,
                _ => ir::Direction::In,
            };
            vars.push(ir::Var {
                name: p.name.name.clone(),
                ty: ty.clone(),
                param: Some(dir),
            });
            self.declare(
                &p.name,
                Sym::Var(
                    ir::VarRef::Local(i as u32),
                    ty,
                    dir != ir::Direction::In,
                    Some(self.nominal_of_type(&p.ty)),
                    self.tuple_nominals(&p.ty),
                ),
            );
        }
        let n_params = vars.len() as u32;
        let saved = self.body.replace(Body {
            kind: BodyKind::Function,
            vars,
            ret: ret.clone(),
            control: None,
            loops: 0,
            externs: Vec::new(),
        });
        let ret_nominal = Some(self.nominal_of_type(&f.return_type));
        let saved_nominal = std::mem::replace(&mut self.return_nominal, ret_nominal);
        let body = self.block(&f.body);
        self.return_nominal = saved_nominal;
        let b = std::mem::replace(&mut self.body, saved).expect("body set above");
        self.pop_scope();
        if ret != Ty::Void && !always_leaves(&body, &self.prog) {
            self.error_label(
                codes::MISSING_RETURN,
                f.name.span,
                format!(
                    "function `{}` does not return a value on all paths",
                    f.name.name
                ),
                "may end without `return`",
            );
        }
        let (externs, names): (Vec<_>, Vec<_>) =
            b.externs.into_iter().map(|e| (e.inst, e.name)).unzip();
        let h = self.prog.functions.append(
            ir::Function {
                name: f.name.name.clone(),
                ret,
                vars: b.vars,
                n_params,
                body,
                externs,
            },
            f.span,
        );
        for (i, n) in names.into_iter().enumerate() {
            self.facts
                .function_extern_names
                .insert((h.index(), i as u32), n);
        }
        let params = self.param_specs(&f.params);
        self.function_params.insert(h.index(), params);
        let ret_nominal = self.nominal_of_type(&f.return_type);
        self.function_ret_nominal.insert(h.index(), ret_nominal);
        Some(h)
    }
}

fn names(ids: &[ast::Ident]) -> Vec<&ast::Ident> {
    ids.iter().collect()
}

fn param_names(ps: &[ast::Param]) -> Vec<&ast::Ident> {
    ps.iter().map(|p| &p.name).collect()
}

/// Whether every path through `b` ends in `return` or `exit` (p4c rejects a
/// function with a result that may fall off its end). Conservative in the
/// accepting direction: loops never count, a `switch` counts when it has a
/// `default` or names every member of a plain enum.
fn always_leaves(b: &ir::Block, prog: &ir::Program) -> bool {
    b.iter().any(|s| match s {
        ir::Stmt::Return(_) | ir::Stmt::Exit => true,
        ir::Stmt::Block(b) => always_leaves(b, prog),
        ir::Stmt::If(c, t, e) => match c.kind {
            ir::ExprKind::Bool(true) => always_leaves(t, prog),
            ir::ExprKind::Bool(false) => e.as_ref().is_some_and(|e| always_leaves(e, prog)),
            _ => always_leaves(t, prog) && e.as_ref().is_some_and(|e| always_leaves(e, prog)),
        },
        ir::Stmt::Switch(x, cases) => {
            let complete = cases.iter().any(|c| c.is_default)
                || match &x.ty {
                    Ty::Enum(e) => {
                        let labels: usize = cases.iter().map(|c| c.labels.len()).sum();
                        labels >= prog.enums[*e].members.len()
                    }
                    _ => false,
                };
            complete
                && cases
                    .iter()
                    .filter_map(|c| c.body.as_ref())
                    .all(|b| always_leaves(b, prog))
        }
        _ => false,
    })
}

impl Checker {
    /// `#define V1MODEL_VERSION` before including v1model.p4 picks the
    /// version of its declarations; p4c refuses a version it does not know
    /// (issue5296: "unknown v1model version; initial supported version is
    /// 20180101, latest is 20200408").
    fn check_v1model_version(&mut self, e: &ir::Expr, span: crate::diag::Span) {
        let (first, latest) = crate::v1model::VERSIONS;
        match fold::const_int(e) {
            Some(v) if (first..=latest).contains(&v) => self.v1model_version = v,
            Some(v) => self.error_label(
                codes::OVERFLOW,
                span,
                format!(
                    "unknown v1model version {v}; the first supported version is {first}, the latest {latest}"
                ),
                "set by `#define V1MODEL_VERSION` before `#include <v1model.p4>`",
            ),
            None => self.error(
                codes::NOT_CONSTANT,
                span,
                "the v1model version must be a non-negative number",
            ),
        }
    }
}

/// The types written inside `t`: its type arguments, tuple elements or
/// stack element.
fn type_arguments(t: &ast::Type) -> Vec<&ast::Type> {
    match &t.kind {
        ast::TypeKind::Named { args, .. } => args.iter().collect(),
        ast::TypeKind::Tuple(items) => items.iter().collect(),
        ast::TypeKind::Stack { elem, .. } => vec![&**elem],
        _ => Vec::new(),
    }
}

/// The first element of a tuple type within `t` (at any depth) that
/// `is_string` calls a string.
fn find_tuple_string(
    t: &ast::Type,
    is_string: impl Fn(&ast::Type) -> bool + Copy,
) -> Option<&ast::Type> {
    use ast::TypeKind as K;
    match &t.kind {
        K::Tuple(items) => items
            .iter()
            .find(|i| is_string(i))
            .or_else(|| items.iter().find_map(|i| find_tuple_string(i, is_string))),
        K::Named { args, .. } => args.iter().find_map(|a| find_tuple_string(a, is_string)),
        K::Stack { elem, .. } => find_tuple_string(elem, is_string),
        K::List(elem) => find_tuple_string(elem, is_string),
        _ => None,
    }
}

/// `t` itself if it is `void`, else the first `void` written inside it.
fn find_void(t: &ast::Type) -> Option<&ast::Type> {
    if matches!(t.kind, ast::TypeKind::Void) {
        return Some(t);
    }
    type_arguments(t).into_iter().find_map(find_void)
}

/// Whether `t` is a `list<..>` type.
fn is_list_type(t: &ast::Type) -> bool {
    matches!(t.kind, ast::TypeKind::List(_))
}

/// The name a `list<T>` parameter's type has in an instance of its
/// function: not a P4 identifier (`#`), so no program name clashes.
fn list_param_type_name(param: &ast::Ident) -> ast::Ident {
    ast::Ident {
        name: format!("list#{}", param.name),
        span: param.span,
    }
}

/// `decl` with each `list<T>` parameter's type replaced by the name
/// [`list_param_type_name`] gives it, which an instance binds to the tuple
/// its call passes.
fn with_list_params_named(mut decl: ast::FunctionDecl) -> ast::FunctionDecl {
    for p in &mut decl.params {
        if is_list_type(&p.ty) {
            let ident = list_param_type_name(&p.name);
            p.ty.kind = ast::TypeKind::Named {
                name: ast::PathName {
                    top_level: false,
                    span: ident.span,
                    ident,
                },
                args: Vec::new(),
            };
        }
    }
    decl
}
