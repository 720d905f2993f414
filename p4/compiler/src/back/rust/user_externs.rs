//! User-defined extern objects and functions (P4_16 §7.2.12): the traits
//! a Rust implementation supplies, and the calls into them.
//!
//! Design. For a program that declares externs of its own (ones v1model
//! does not define), the generated module gets:
//! - one trait per extern object type, named after it, with `fn new(..)`
//!   taking the constructor arguments by value and one `&mut self` method
//!   per P4 method: `in` parameters come as `&T`, `out`/`inout` as `&mut T`
//!   (an `out` one holds the argument's value on entry, which P4 leaves
//!   unspecified), the P4 return value is the Rust
//!   one. `bit<W>`/`int<W>` are the native `u8`..`u128` holding the value's
//!   bits (an `int<W>` in two's complement, masked to `W` bits), `bool` is
//!   `bool`, enums and `error` are `u32` codes, headers and structs are the
//!   generated structs (a tuple the struct `tuple_N` made up for it). An
//!   overload (same name, another arity or other parameter names), and a
//!   call leaving out trailing `@optional` parameters, is named `NAME_N`
//!   for `N` parameters (`NAME_N_1` for the next one of that arity); a copy
//!   of a generic extern type, method or function is named after its type
//!   arguments (`DelayLine_bit8`, `of_ethernet_t`, `sum_tuple_0`);
//! - a trait `Externs` (`Default + Send + 'static`) with one associated type
//!   per extern object type and one `&mut self` method per extern function
//!   (types never instantiated and functions never called are left out);
//! - `ExternObjects<X>`: one field per instance (`MyIngress_c`, a top-level
//!   instance once under its own name), created by `new` with the folded
//!   constructor arguments, plus `functions: X`;
//! - `Program<X: Externs>`: the pipeline is generic over the implementation,
//!   and every control function takes `ext__: &mut ExternObjects<X>`.
//!
//! Each call is recorded in the packet trace (`Tally.add` on
//! `MyIngress.tally`, with a scalar result).
//!
//! So calls are static (no `dyn`, no allocation on the per-packet path), and
//! a program without user externs generates exactly what it did before
//! (nothing here runs). Writing an `out`/`inout` argument back follows the
//! copy-in/copy-out rules of functions (§6.8).

use super::*;

/// Names chosen for a program's user externs.
pub(super) struct UserNames {
    /// The `Externs` trait.
    pub(super) externs: String,
    /// The `ExternObjects` struct.
    pub(super) objects: String,
    /// The generic parameter of everything that holds or calls them.
    pub(super) param: String,
    /// Per extern object type: its trait.
    pub(super) traits: Vec<String>,
    /// Per extern object type, per method: its Rust name.
    pub(super) methods: Vec<Vec<String>>,
    /// Per extern function: its Rust name.
    pub(super) functions: Vec<String>,
    /// Per instance (`info::Layout::user_instances`): its field.
    pub(super) fields: Vec<String>,
}

/// A user-defined extern that a program uses and a Rust implementation
/// must supply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequiredExtern {
    /// What it is in P4 (`extern object type `PacketTally``).
    pub p4: String,
    /// What to implement in Rust (`trait `PacketTally`, named as `Externs::PacketTally``).
    pub rust: String,
}

/// The diagnostic for a program whose user externs have no implementation:
/// each extern, the trait to implement, and how to supply it (`how`, e.g.
/// "pass --externs FILE").
pub fn missing_externs_message(program: &str, required: &[RequiredExtern], how: &str) -> String {
    let mut s =
        format!("`{program}` uses user-defined externs that need a Rust implementation ({how}):\n");
    for r in required {
        s.push_str(&format!("  - {}: implement {}\n", r.p4, r.rust));
    }
    s.push_str(
        "The implementation is a Rust module placed inside the generated program module \
         (`use super::*;` names the traits); it defines `pub struct UserExterns` implementing \
         `Externs` (see README.md, \"User-defined externs\").\n",
    );
    s
}

/// The name of the `ext__` parameter every control function takes.
pub(super) const EXT: &str = "ext__";

/// Rust names of overloads: the first of a name keeps it, the others get
/// their arity appended.
fn overload_names(prog: &Program, fns: &[UserFn], namer: &mut Namer) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    fns.iter()
        .map(|f| {
            let name = with_type_args(prog, &f.name, &f.type_args);
            let base = if seen.contains(&name) {
                format!("{name}_{}", f.params.len())
            } else {
                seen.push(name.clone());
                name
            };
            escape(&namer.fresh(&base))
        })
        .collect()
}

/// The Rust names of `ext`'s constructors: `new`, and `new_N` (`N`
/// parameters) for each one declared after the first (made unique when
/// several share an arity, told apart by their parameter names).
fn ctor_names(ext: &UserExtern) -> Vec<String> {
    let mut namer = Namer::default();
    (0..ext.ctors.len())
        .map(|ci| match ci {
            0 => namer.fresh("new"),
            _ => namer.fresh(&format!("new_{}", ext.ctors[ci].len())),
        })
        .collect()
}

/// The Rust name of a copy of a generic extern: its P4 name followed by
/// its type arguments (`get_bit16`, `Stack_bit8`, `log_headers_t`).
fn with_type_args(prog: &Program, name: &str, type_args: &[Ty]) -> String {
    let mut s = name.to_string();
    for t in type_args {
        s.push('_');
        s.push_str(&ty_word(prog, t));
    }
    s
}

fn ty_word(prog: &Program, ty: &Ty) -> String {
    match ty {
        Ty::Bool => "bool".into(),
        Ty::Bit(w) => format!("bit{w}"),
        Ty::Int(w) => format!("int{w}"),
        Ty::Varbit(w) => format!("varbit{w}"),
        Ty::Error => "error".into(),
        Ty::Enum(e) | Ty::SerEnum(e) => prog.enums[*e].name.clone(),
        Ty::Composite(c) => prog.composites[*c].name.to_string(),
        Ty::Stack(t, n) => format!("{}x{n}", ty_word(prog, t)),
        Ty::Tuple(_) => "tuple".into(),
        Ty::Str => "string".into(),
        Ty::Void => "void".into(),
    }
}

impl UserNames {
    /// Names for `prog`'s user externs (`instances` are its user extern
    /// objects, from the checker's layout), `None` when it has none.
    pub(super) fn new(
        prog: &Program,
        instances: &[UserInstance],
        top: &mut Namer,
    ) -> Option<UserNames> {
        if instances.is_empty() && !prog.user_functions.iter().any(|f| f.used) {
            return None;
        }
        let traits = prog
            .user_externs
            .iter()
            .map(|u| top.fresh(&with_type_args(prog, &u.name, &u.type_args)))
            .collect();
        let externs = top.fresh("Externs");
        let objects = top.fresh("ExternObjects");
        let methods = prog
            .user_externs
            .iter()
            .map(|u| {
                // Methods keep clear of the constructors' names.
                let ctors = ctor_names(u);
                let ctors: Vec<&str> = ctors.iter().map(String::as_str).collect();
                overload_names(prog, &u.methods, &mut Namer::with_reserved(&ctors))
            })
            .collect();
        let functions = overload_names(prog, &prog.user_functions, &mut Namer::default());
        let mut fields_namer = Namer::with_reserved(&["functions"]);
        let fields = instances
            .iter()
            .map(|i| fields_namer.fresh(&i.name))
            .collect();
        Some(UserNames {
            externs,
            objects,
            param: "X__".into(),
            traits,
            methods,
            functions,
            fields,
        })
    }
}

fn p4_ty_name(prog: &Program, ty: &Ty) -> String {
    match ty {
        Ty::Bool => "bool".into(),
        Ty::Bit(w) => format!("bit<{w}>"),
        Ty::Int(w) => format!("int<{w}>"),
        Ty::Error => "error".into(),
        Ty::Enum(e) | Ty::SerEnum(e) => prog.enums[*e].name.clone(),
        Ty::Composite(c) => prog.composites[*c].name.to_string(),
        Ty::Void => "void".into(),
        Ty::Tuple(items) => {
            let items: Vec<String> = items.iter().map(|t| p4_ty_name(prog, t)).collect();
            format!("tuple<{}>", items.join(", "))
        }
        other => format!("{other:?}"),
    }
}

/// `Name<T1, T2>` (just `Name` without type arguments).
fn p4_generic_name(prog: &Program, name: &str, type_args: &[Ty]) -> String {
    if type_args.is_empty() {
        return name.to_string();
    }
    let args: Vec<String> = type_args.iter().map(|t| p4_ty_name(prog, t)).collect();
    format!("{name}<{}>", args.join(", "))
}

fn p4_dir(d: Direction) -> &'static str {
    match d {
        Direction::In => "in",
        Direction::Out => "out",
        Direction::InOut => "inout",
    }
}

impl Gen<'_> {
    /// What the generated code needs implemented.
    pub(super) fn required_externs(&self) -> Vec<RequiredExtern> {
        let Some(u) = &self.names.user else {
            return Vec::new();
        };
        let mut v = Vec::new();
        for (ui, ext) in self
            .prog
            .user_externs
            .iter()
            .enumerate()
            .filter(|(_, e)| e.used)
        {
            v.push(RequiredExtern {
                p4: format!(
                    "extern object type `{}`",
                    p4_generic_name(self.prog, &ext.name, &ext.type_args)
                ),
                rust: format!(
                    "trait `{}` and name the type as `{}::{}`",
                    u.traits[ui], u.externs, u.traits[ui]
                ),
            });
        }
        for (fi, f) in self
            .prog
            .user_functions
            .iter()
            .enumerate()
            .filter(|(_, f)| f.used)
        {
            v.push(RequiredExtern {
                p4: format!(
                    "extern function `{}`",
                    p4_generic_name(self.prog, &f.name, &f.type_args)
                ),
                rust: format!("method `{}::{}`", u.externs, u.functions[fi]),
            });
        }
        v
    }

    /// `<X__: Externs>` for functions that take the extern objects, or
    /// nothing.
    /// Generic parameters of every function that takes the runtime: the
    /// user externs' implementation type and, with trace points,
    /// `const TRACE: bool` (see `trace.rs`).
    pub(super) fn fn_generics(&self) -> String {
        let mut g = Vec::new();
        if let Some(u) = &self.names.user {
            g.push(format!("{}: {}", u.param, u.externs));
        }
        if self.trace_points {
            g.push("const TRACE: bool".to_string());
        }
        if g.is_empty() {
            String::new()
        } else {
            format!("<{}>", g.join(", "))
        }
    }

    /// The generic arguments a call to such a function passes on from its
    /// caller (`::<TRACE>`).
    pub(super) fn fn_turbofish(&self) -> String {
        if !self.trace_points {
            return String::new();
        }
        match &self.names.user {
            Some(_) => "::<_, TRACE>".to_string(),
            None => "::<TRACE>".to_string(),
        }
    }

    /// The Rust type of a constructor parameter: signed integers come as
    /// the signed native type (`int` as `i128`), the rest as elsewhere.
    /// A constructor argument of type `ty` taken from `values`: a scalar
    /// one value, the struct made up for a tuple one per field.
    fn ctor_arg<'v>(
        &self,
        ty: &Ty,
        values: &mut impl Iterator<Item = &'v ConstValue>,
    ) -> Result<String, BackError> {
        if let Ty::Composite(c) = ty {
            let mut fields = Vec::new();
            for (i, f) in self.prog.composites[*c].fields.iter().enumerate() {
                let v = self.ctor_arg(&f.ty, values)?;
                fields.push(format!("{}: {v}", self.field_name(ty, i as u32)?));
            }
            return Ok(format!(
                "{} {{ {} }}",
                self.names.composites[c.index()],
                fields.join(", ")
            ));
        }
        Ok(match values.next() {
            Some(ConstValue::Bool(b)) => b.to_string(),
            Some(ConstValue::Bit { value, .. }) => format!("{value:#x}{}", self.rust_ty(ty)?),
            Some(ConstValue::Int { value, .. }) => format!("{value}{}", self.ctor_ty(ty)?),
            Some(ConstValue::Integer(v)) => format!("{v}"),
            None => return bad("internal: too few constructor arguments", None),
        })
    }

    fn ctor_ty(&self, ty: &Ty) -> Result<String, BackError> {
        match ty {
            Ty::Int(w) => Ok(native_uint(*w).replace('u', "i")),
            _ => self.rust_ty(ty),
        }
    }

    /// The P4 prototype of `f`, for doc comments.
    fn p4_prototype(&self, f: &UserFn) -> String {
        let params: Vec<String> = f
            .params
            .iter()
            .map(|p| {
                format!(
                    "{} {} {}",
                    p4_dir(p.dir),
                    p4_ty_name(self.prog, &p.ty),
                    p.name
                )
            })
            .collect();
        format!(
            "{} {}({})",
            p4_ty_name(self.prog, &f.ret),
            p4_generic_name(self.prog, &f.name, &f.type_args),
            params.join(", ")
        )
    }

    /// The Rust signature of method or function `f` named `name`.
    fn rust_method(&self, f: &UserFn, name: &str) -> Result<String, BackError> {
        let mut params = vec!["&mut self".to_string()];
        for p in &f.params {
            let t = self.rust_ty(&p.ty)?;
            let amp = if p.dir == Direction::In { "&" } else { "&mut " };
            params.push(format!("{}: {amp}{t}", escape(&p.name)));
        }
        let ret = match f.ret {
            Ty::Void => String::new(),
            ref t => format!(" -> {}", self.rust_ty(t)?),
        };
        Ok(format!("fn {name}({}){ret};", params.join(", ")))
    }

    /// The traits and the objects struct (nothing without user externs).
    pub(super) fn user_extern_items(&mut self) -> Result<(), BackError> {
        let Some(u) = &self.names.user else {
            return Ok(());
        };
        let mut lines: Vec<(bool, String)> = Vec::new();
        let mut line = |open_close: bool, s: String| lines.push((open_close, s));
        let used_externs = || {
            self.prog
                .user_externs
                .iter()
                .enumerate()
                .filter(|(_, e)| e.used)
        };
        for (ui, ext) in used_externs() {
            line(
                false,
                format!(
                    "/// The P4 extern object type `{}`: implement it and name the type in [`{}`].",
                    p4_generic_name(self.prog, &ext.name, &ext.type_args),
                    u.externs
                ),
            );
            line(
                true,
                format!("pub trait {}: Send + 'static {{", u.traits[ui]),
            );
            for (ci, c) in ext.ctors.iter().enumerate() {
                let ctor: Vec<String> = c
                    .iter()
                    .map(|p| match p.ty {
                        _ if p.list => {
                            format!("list<{}> {}", p4_ty_name(self.prog, &p.ty), p.name)
                        }
                        // How the checker holds an `int` constructor parameter.
                        Ty::Int(128) => format!("int {}", p.name),
                        _ => format!("{} {}", p4_ty_name(self.prog, &p.ty), p.name),
                    })
                    .collect();
                line(
                    false,
                    format!("/// The constructor `{}({})`.", ext.name, ctor.join(", ")),
                );
                let mut params = Vec::new();
                for p in c {
                    // A list is a slice: its length is the argument's.
                    let ty = match p.list {
                        true => format!("&[{}]", self.ctor_ty(&p.ty)?),
                        false => self.ctor_ty(&p.ty)?,
                    };
                    params.push(format!("{}: {ty}", escape(&p.name)));
                }
                line(
                    false,
                    format!(
                        "fn {}({}) -> Self where Self: Sized;",
                        ctor_names(ext)[ci],
                        params.join(", ")
                    ),
                );
            }
            for (mi, m) in ext.methods.iter().enumerate() {
                line(false, format!("/// `{};`", self.p4_prototype(m)));
                line(false, self.rust_method(m, &u.methods[ui][mi])?);
            }
            line(true, "}".into());
            line(false, String::new());
        }
        line(
            false,
            "/// The program's user-defined externs: a type per extern object type, a method per extern".into(),
        );
        line(
            false,
            "/// function. `Program<X>` runs the program with `X`'s.".into(),
        );
        line(
            true,
            format!("pub trait {}: Default + Send + 'static {{", u.externs),
        );
        for (ui, ext) in used_externs() {
            line(
                false,
                format!(
                    "/// Objects of the extern type `{}`.",
                    p4_generic_name(self.prog, &ext.name, &ext.type_args)
                ),
            );
            line(false, format!("type {0}: {0};", u.traits[ui]));
        }
        for (fi, f) in self
            .prog
            .user_functions
            .iter()
            .enumerate()
            .filter(|(_, f)| f.used)
        {
            line(false, format!("/// `extern {};`", self.p4_prototype(f)));
            line(false, self.rust_method(f, &u.functions[fi])?);
        }
        line(true, "}".into());
        line(false, String::new());
        let x = &u.param;
        line(
            false,
            "/// Every user extern object of the program (one per instance), and the functions."
                .into(),
        );
        line(
            true,
            format!("pub struct {}<{x}: {}> {{", u.objects, u.externs),
        );
        line(false, "/// The extern functions.".into());
        line(false, format!("pub functions: {x},"));
        for (ii, inst) in self.info.layout.user_instances.iter().enumerate() {
            let t = &u.traits[inst.decl as usize];
            line(false, format!("/// `{}`.", inst.name));
            line(false, format!("pub {}: {x}::{t},", u.fields[ii]));
        }
        line(true, "}".into());
        line(false, String::new());
        line(
            true,
            format!("impl<{x}: {}> {}<{x}> {{", u.externs, u.objects),
        );
        line(
            false,
            "/// Every object constructed with its P4 constructor arguments.".into(),
        );
        line(true, "pub fn new() -> Self {".into());
        line(true, "Self {".into());
        line(false, format!("functions: {x}::default(),"));
        for (ii, inst) in self.info.layout.user_instances.iter().enumerate() {
            let ext = &self.prog.user_externs[inst.decl as usize];
            let t = &u.traits[inst.decl as usize];
            let mut args = Vec::new();
            let mut values = inst.args.iter();
            for p in &ext.ctors[inst.ctor as usize] {
                if p.list {
                    let Some(ConstValue::Integer(n)) = values.next() else {
                        return bad("internal: a list argument without its length", None);
                    };
                    let mut items = Vec::new();
                    for _ in 0..*n {
                        items.push(self.ctor_arg(&p.ty, &mut values)?);
                    }
                    args.push(format!("&[{}]", items.join(", ")));
                } else {
                    args.push(self.ctor_arg(&p.ty, &mut values)?);
                }
            }
            line(
                false,
                format!(
                    "{}: <{x}::{t} as {t}>::{}({}),",
                    u.fields[ii],
                    ctor_names(ext)[inst.ctor as usize],
                    args.join(", ")
                ),
            );
        }
        line(true, "}".into());
        line(true, "}".into());
        line(true, "}".into());
        line(false, String::new());
        for (oc, l) in lines {
            if oc && l.starts_with('}') {
                self.w.close(l);
            } else if oc {
                self.w.open(l);
            } else {
                self.w.line(l);
            }
        }
        Ok(())
    }

    /// A call of a user extern method or function, as an expression of the
    /// call's value (`()` for `void`).
    pub(super) fn user_call(
        &self,
        ctx: &Ctx<'_>,
        b: &Builtin,
        span: Span,
    ) -> Result<String, BackError> {
        let Some(u) = &self.names.user else {
            return bad(
                "internal: user extern call without user externs",
                Some(span),
            );
        };
        // What the packet trace records: the P4 call, the object.
        let (f, callee, args, traced, object) = match b {
            Builtin::UserMethod { inst, method, args } => {
                let idx = self.extern_index(ctx, *inst, span)? as usize;
                let decl = self.info.layout.user_instances[idx].decl as usize;
                let f = &self.prog.user_externs[decl].methods[*method as usize];
                let callee = format!(
                    "{EXT}.{}.{}",
                    u.fields[idx], u.methods[decl][*method as usize]
                );
                let traced = format!("{}.{}", self.prog.user_externs[decl].name, f.name);
                let object = format!("{:?}", self.info.layout.user_instances[idx].name);
                (f, callee, args, traced, Some(object))
            }
            Builtin::UserFunction { func, args } => {
                let f = &self.prog.user_functions[*func as usize];
                let callee = format!("{EXT}.functions.{}", u.functions[*func as usize]);
                (f, callee, args, f.name.clone(), None)
            }
            _ => return bad("internal: not a user extern call", Some(span)),
        };
        let params: Vec<(Direction, Ty)> = f.params.iter().map(|p| (p.dir, p.ty.clone())).collect();
        let (pre, list, post) = self.args(ctx, &params, args)?;
        let list: Vec<String> = list
            .into_iter()
            .zip(&f.params)
            .map(|(a, p)| {
                if p.dir == Direction::In {
                    format!("&{a}")
                } else {
                    a
                }
            })
            .collect();
        let call = format!("{callee}({})", list.join(", "));
        let call = self.native_to_value(&call, &f.ret);
        let call = Self::wrap_call(pre, call, post, "");
        let value = self.is_bits(&f.ret).then(|| "t__".to_string());
        Ok(match self.trace_call(ctx, &traced, object, None, value) {
            Some(trace) => format!("{{ let t__ = {call}; {trace} t__ }}"),
            None => call,
        })
    }
}
