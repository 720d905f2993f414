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
mod consts;
mod decls;
mod expr;
mod extern_alias;
mod extern_params;
pub mod fold;
mod functions;
mod nominal;
mod overloads;
mod package;
mod program_info;
mod select;
mod signatures;
mod stmt;
mod types;
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
    /// `call` for the callee it checks next: user extern methods and
    /// functions of one arity are told apart by them
    /// ([`Checker::pick_by_bound_names`]).
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
    /// The parameters of each user extern function declared, by name (its
    /// overloads must differ in arity or names; `check::overloads`).
    pub(crate) extern_function_params: HashMap<String, Vec<Vec<ParamSpec>>>,
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
        extern_function_params: HashMap::new(),
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
}
