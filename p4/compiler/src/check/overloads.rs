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

    /// The function of `candidates` (the overloads of `name`) that a call
    /// with `args` binds to: those taking exactly that many arguments, else
    /// those whose parameters left out all have defaults; among several,
    /// the one whose parameter names the named arguments match.
    pub(crate) fn pick_overload(
        &mut self,
        name: &str,
        candidates: &[Sym],
        args: &[ast::Argument],
        span: Span,
    ) -> Option<Sym> {
        let named: Vec<&str> = args
            .iter()
            .filter_map(|a| a.name.as_ref().map(|n| n.name.as_str()))
            .collect();
        let with_params: Vec<(&Sym, Vec<ParamSpec>)> = candidates
            .iter()
            .filter_map(|s| Some((s, self.overload_params(s)?)))
            .collect();
        let names_fit = |p: &[ParamSpec]| named.iter().all(|n| p.iter().any(|q| q.name == *n));
        let exact: Vec<_> = with_params
            .iter()
            .filter(|(_, p)| p.len() == args.len() && names_fit(p))
            .collect();
        let fitting: Vec<_> = if exact.is_empty() {
            with_params
                .iter()
                .filter(|(_, p)| {
                    p.len() > args.len()
                        && names_fit(p)
                        && p.iter()
                            .filter(|q| !named.contains(&q.name.as_str()))
                            .skip(args.len() - named.len())
                            .all(|q| q.default.is_some())
                })
                .collect()
        } else {
            exact
        };
        let listed = |v: &[&(&Sym, Vec<ParamSpec>)]| {
            v.iter()
                .map(|(_, p)| signature(name, param_names(p)))
                .collect::<Vec<_>>()
        };
        match fitting.as_slice() {
            [(s, _)] => Some((*s).clone()),
            [] => {
                let all: Vec<_> = with_params.iter().collect();
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

fn param_names(params: &[ParamSpec]) -> impl Iterator<Item = &str> {
    params.iter().map(|p| p.name.as_str())
}

/// `` `f(a)`, `f(b)` ``
fn quoted(signatures: &[String]) -> String {
    let quoted: Vec<String> = signatures.iter().map(|s| format!("`{s}`")).collect();
    quoted.join(", ")
}
