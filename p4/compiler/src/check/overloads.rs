//! Overloaded functions (P4_16 §7.2.12, "Extern objects": functions and
//! methods are the only constructs that overload). Declarations of one name
//! must differ in their number of parameters or in their parameter names;
//! a call picks the declaration by its number of arguments first, then by
//! the names of its arguments, never by their types.
//!
//! A function declared once is a plain [`Sym::Function`] or
//! [`Sym::GenericFunction`]; a second one of the same name turns the name
//! into a [`Sym::Overloaded`] holding both, and [`Checker::pick_overload`]
//! resolves each call to one of them before its arguments are bound.
//!
//! Extern overloads go through the same rules: an instantiation picks one
//! of its extern's constructors ([`Checker::pick_constructor`]; p4c looks a
//! constructor up as a method named like its extern), a call of an extern
//! method or function binds its arguments to the overload [`fitting`]
//! names first, then [`Checker::pick_by_bound_names`] chooses among those
//! of its arity by the parameter names the arguments were bound to.

use super::{Checker, ParamSpec, Sym, codes};
use crate::diag::Span;
use crate::front::ast;

impl Checker {
    /// The parameters of function symbol `sym` (a plain or generic
    /// function), as call binding sees them.
    fn overload_params(&self, sym: &Sym) -> Option<Vec<ParamSpec>> {
        match sym {
            Sym::Function(f) => self.function_params.get(&f.index()).cloned(),
            Sym::GenericFunction(key) => self
                .generic_fns
                .get(key)
                .map(|(d, _)| ParamSpec::of(&d.params)),
            _ => None,
        }
    }

    /// `old` and `new` both declare functions named `id`: the symbol for
    /// the name holding both, or `None` (with an error) when no call could
    /// tell them apart: the same number of parameters with the same names.
    pub(crate) fn add_overload(&mut self, old: &Sym, new: Sym, id: &ast::Ident) -> Option<Sym> {
        let mut all = match old {
            Sym::Overloaded(v) => v.clone(),
            Sym::Function(_) | Sym::GenericFunction(_) => vec![old.clone()],
            _ => return None,
        };
        if !matches!(new, Sym::Function(_) | Sym::GenericFunction(_)) {
            return None;
        }
        let new_params = self.overload_params(&new)?;
        let clash = all.iter().find_map(|s| {
            let p = self.overload_params(s)?;
            same_names(&p, &new_params).then(|| signature(&id.name, param_names(&p)))
        });
        if let Some(other) = clash {
            self.error_label(
                codes::DUPLICATE,
                id.span,
                format!(
                    "function `{}` is declared twice as `{other}`: overloads must differ in their \
                     number of parameters or in their parameter names",
                    id.name
                ),
                "no call could choose between these",
            );
            return Some(Sym::Overloaded(all));
        }
        all.push(new);
        Some(Sym::Overloaded(all))
    }

    /// Records extern function `f`, reporting it if an earlier one of its
    /// name has the same number of parameters with the same names (no call
    /// could choose between them).
    pub(super) fn extern_function_overload(&mut self, f: &ast::FunctionPrototype) {
        let params = ParamSpec::of(&f.params);
        let declared = self
            .extern_function_params
            .entry(f.name.name.clone())
            .or_default();
        let clash = declared
            .iter()
            .find(|p| same_names(p, &params))
            .map(|p| signature(&f.name.name, param_names(p)));
        declared.push(params);
        if let Some(other) = clash {
            self.error_label(
                codes::DUPLICATE,
                f.name.span,
                format!(
                    "extern function `{}` is declared twice as `{other}`: overloads must differ in \
                     their number of parameters or in their parameter names",
                    f.name.name
                ),
                "no call could choose between these",
            );
        }
    }

    /// The function of `candidates` (the overloads of `name`) that a call
    /// with `args` binds to ([`fitting`]).
    pub(crate) fn pick_overload(
        &mut self,
        name: &str,
        candidates: &[Sym],
        args: &[ast::Argument],
        span: Span,
    ) -> Option<Sym> {
        let with_params: Vec<(&Sym, Vec<ParamSpec>)> = candidates
            .iter()
            .filter_map(|s| Some((s, self.overload_params(s)?)))
            .collect();
        let params: Vec<Vec<ParamSpec>> = with_params.iter().map(|(_, p)| p.clone()).collect();
        let listed = |v: &[usize]| {
            v.iter()
                .map(|&i| signature(name, param_names(&params[i])))
                .collect::<Vec<_>>()
        };
        match fitting(&params, args).as_slice() {
            [i] => Some(with_params[*i].0.clone()),
            [] => {
                let all: Vec<usize> = (0..params.len()).collect();
                self.error_label(
                    codes::ARG_COUNT,
                    span,
                    format!(
                        "no overload of function `{name}` takes these {} argument(s); declared: {}",
                        args.len(),
                        quoted(&listed(&all))
                    ),
                    "no matching overload",
                );
                None
            }
            several => {
                self.ambiguous_call(name, &listed(several), args.len(), span);
                None
            }
        }
    }

    /// Which of the constructors of extern `name` (their parameters, in
    /// declaration order) an instantiation with `args` calls: constructors
    /// overload as methods do (P4_16 §7.2.12.2; p4c looks a constructor up
    /// as a method named like its extern). With none fitting, the first,
    /// whose check reports the wrong arguments; `None` after reporting an
    /// instantiation several fit alike.
    pub(crate) fn pick_constructor(
        &mut self,
        name: &str,
        ctors: &[Vec<ParamSpec>],
        args: &[ast::Argument],
        span: Span,
    ) -> Option<usize> {
        match fitting(ctors, args).as_slice() {
            [] => Some(0),
            [i] => Some(*i),
            several => {
                let listed: Vec<String> = several
                    .iter()
                    .map(|&i| signature(name, param_names(&ctors[i])))
                    .collect();
                self.ambiguous_call(name, &listed, args.len(), span);
                None
            }
        }
    }

    /// Which of the overloads of one arity `same_arity` (their parameter
    /// names) a call of `callee` whose arguments are bound binds to: the
    /// one whose parameter names its named arguments were bound to
    /// ([`Checker::bound_param_names`]), else the only one. `Ok(None)` when
    /// there is none, `Err` after reporting a call several fit alike.
    pub(crate) fn pick_by_bound_names(
        &mut self,
        callee: &str,
        name: &str,
        same_arity: &[Vec<&str>],
        span: Span,
    ) -> Result<Option<usize>, ()> {
        let bound = self.bound_param_names.take();
        let by_names = bound
            .as_ref()
            .and_then(|names| same_arity.iter().position(|ps| ps.iter().eq(names.iter())));
        match (by_names, same_arity) {
            (Some(i), _) => Ok(Some(i)),
            (None, [] | [_]) => Ok((!same_arity.is_empty()).then_some(0)),
            (None, several) => {
                let listed: Vec<String> = several
                    .iter()
                    .map(|ps| signature(name, ps.iter().copied()))
                    .collect();
                self.ambiguous_call(callee, &listed, several[0].len(), span);
                Err(())
            }
        }
    }

    /// Reports a call that several overloads of one arity fit alike
    /// (`candidates` their signatures, from [`signature`]).
    pub(super) fn ambiguous_call(
        &mut self,
        callee: &str,
        candidates: &[String],
        arity: usize,
        span: Span,
    ) {
        self.error_label(
            codes::ARG_COUNT,
            span,
            format!(
                "the call of `{callee}` is ambiguous: {} all take {arity} argument(s); name the \
                 arguments to choose one",
                quoted(candidates)
            ),
            "ambiguous call",
        );
    }
}

/// Whether two parameter lists have the same number of parameters with the
/// same names (in any order), so no call can choose between them.
fn same_names(a: &[ParamSpec], b: &[ParamSpec]) -> bool {
    a.len() == b.len() && a.iter().all(|p| b.iter().any(|q| q.name == p.name))
}

/// `f(a, b)`: a callee's name with its parameter names, for diagnostics.
pub(super) fn signature<'a>(name: &str, params: impl IntoIterator<Item = &'a str>) -> String {
    format!(
        "{name}({})",
        params.into_iter().collect::<Vec<_>>().join(", ")
    )
}

/// Of the overloads `candidates` (their parameters), the indices of those
/// a call with `args` binds to: the ones taking exactly that many
/// arguments whose parameter names the named arguments all match, else
/// those whose parameters the call leaves out all have defaults.
pub(super) fn fitting(candidates: &[Vec<ParamSpec>], args: &[ast::Argument]) -> Vec<usize> {
    let named: Vec<&str> = args
        .iter()
        .filter_map(|a| a.name.as_ref().map(|n| n.name.as_str()))
        .collect();
    let names_fit = |p: &[ParamSpec]| named.iter().all(|n| p.iter().any(|q| q.name == *n));
    let matching = |keep: &dyn Fn(&[ParamSpec]) -> bool| -> Vec<usize> {
        (0..candidates.len())
            .filter(|&i| names_fit(&candidates[i]) && keep(&candidates[i]))
            .collect()
    };
    let exact = matching(&|p| p.len() == args.len());
    if !exact.is_empty() {
        return exact;
    }
    matching(&|p| {
        p.len() > args.len()
            && p.iter()
                .filter(|q| !named.contains(&q.name.as_str()))
                .skip(args.len() - named.len())
                .all(|q| q.default.is_some())
    })
}

fn param_names(params: &[ParamSpec]) -> impl Iterator<Item = &str> {
    params.iter().map(|p| p.name.as_str())
}

/// `` `f(a)`, `f(b)` ``
fn quoted(signatures: &[String]) -> String {
    let quoted: Vec<String> = signatures.iter().map(|s| format!("`{s}`")).collect();
    quoted.join(", ")
}
