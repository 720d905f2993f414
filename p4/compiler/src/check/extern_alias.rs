//! Typedefs that name an extern type, resolved before checking.
//!
//! P4_16 §7.5.6 lets `typedef` name any type, extern types included:
//! `typedef register<bit<69>> Mac_table;` and then `Mac_table(4096) t;`.
//! The checker knows externs by the name an instantiation is written with,
//! so this pass rewrites every instantiation of such an alias (at top level,
//! among a control's or parser's locals, inside an instantiation's
//! initializer, and as a statement) into an instantiation of the extern type
//! it stands for, and drops the alias typedefs. An alias may name another
//! alias. A program with no such typedef is returned as it is, borrowed.
//!
//! The parameters of controls, parsers (apply and constructor), actions
//! and functions whose type is an alias are rewritten too (since ext26), so
//! `control C(inout h_t h, Reg8 r)` takes an extern instance as
//! `register<bit<8>>` would (`check::extern_params`), and an action's or a
//! function's meets the error the extern type itself gets. Other uses of
//! an alias (a local's type, say) are left alone and meet the checker's
//! usual error for an extern type used as a value type. An alias of a type
//! with its type arguments given takes no more (`P16<bit<16>>(1) p;`, p4c's
//! generic-extern-inference-typedef_e): that is reported here, and the
//! instance is still rewritten so it raises no further errors.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use super::codes;
use crate::diag::Diagnostic;
use crate::front::ast;

/// The aliases being resolved, and the misuses found doing so.
struct Aliases {
    /// Alias name -> the type it stands for, itself already resolved.
    map: HashMap<String, ast::Type>,
    diags: Vec<Diagnostic>,
}

/// `prog` with its extern-type typedefs resolved (see the module doc), and
/// the errors found doing so.
pub(super) fn resolve(prog: &ast::Program) -> (Cow<'_, ast::Program>, Vec<Diagnostic>) {
    let externs: HashSet<&str> = prog
        .decls
        .iter()
        .filter_map(|d| match d {
            ast::Decl::Extern(e) => Some(e.name.name.as_str()),
            _ => None,
        })
        .collect();
    // Alias name -> the type it stands for, itself already resolved.
    let mut aliases: HashMap<String, ast::Type> = HashMap::new();
    for d in &prog.decls {
        let ast::Decl::Typedef(t) = d else { continue };
        if t.is_new_type {
            continue;
        }
        let ast::TypeKind::Named { name, args } = &t.ty.kind else {
            continue;
        };
        if let Some(target) = aliases.get(&name.ident.name) {
            if args.is_empty() {
                let target = target.clone();
                aliases.insert(t.name.name.clone(), target);
            }
        } else if externs.contains(name.ident.name.as_str()) {
            aliases.insert(t.name.name.clone(), t.ty.clone());
        }
    }
    if aliases.is_empty() {
        return (Cow::Borrowed(prog), Vec::new());
    }
    let mut out = prog.clone();
    out.decls.retain(|d| match d {
        ast::Decl::Typedef(t) => !aliases.contains_key(&t.name.name) || t.is_new_type,
        _ => true,
    });
    let mut aliases = Aliases {
        map: aliases,
        diags: Vec::new(),
    };
    for d in &mut out.decls {
        decl(d, &mut aliases);
    }
    (Cow::Owned(out), aliases.diags)
}

fn instantiation(i: &mut ast::Instantiation, aliases: &mut Aliases) {
    alias_type(&mut i.ty, "(...)", aliases);
    instance_initializer(i, aliases);
}

/// Rewrites `ty` into the extern type it names if it is an alias; `use_`
/// is what follows the alias where it is written (`(...)` for an
/// instantiation), for the diagnostic.
fn alias_type(ty: &mut ast::Type, use_: &str, aliases: &mut Aliases) {
    if let ast::TypeKind::Named { name, args } = &ty.kind
        && let Some(target) = aliases.map.get(&name.ident.name)
    {
        let (ext, target_args) = match &target.kind {
            ast::TypeKind::Named { name, args } => (name.ident.name.as_str(), args.len()),
            _ => ("?", 0),
        };
        // An alias written without type arguments passes those of the
        // instance on (the extern's own count check sees them).
        if target_args == 0 && !args.is_empty() {
            let mut to_ty = target.clone();
            if let ast::TypeKind::Named { args: to, .. } = &mut to_ty.kind {
                to.clone_from(args);
            }
            to_ty.span = ty.span;
            *ty = to_ty;
            return;
        }
        if !args.is_empty() {
            aliases.diags.push(
                Diagnostic::error(
                    codes::ARG_COUNT,
                    format!(
                        "`{0}` is a typedef of extern `{ext}` with its type arguments given, so \
                         it takes none; {1} it as `{0}{use_}`",
                        name.ident.name,
                        if use_.is_empty() {
                            "write"
                        } else {
                            "instantiate"
                        }
                    ),
                )
                .with_primary(ty.span, "type arguments given twice"),
            );
        }
        // The target keeps its own spans; the type keeps the span it was
        // written at for diagnostics.
        let span = ty.span;
        *ty = target.clone();
        ty.span = span;
    }
}

fn params(ps: &mut [ast::Param], aliases: &mut Aliases) {
    for p in ps {
        alias_type(&mut p.ty, "", aliases);
    }
}

fn instance_initializer(i: &mut ast::Instantiation, aliases: &mut Aliases) {
    for d in i.initializer.iter_mut().flatten() {
        decl(d, aliases);
    }
}

fn decl(d: &mut ast::Decl, aliases: &mut Aliases) {
    match d {
        ast::Decl::Instantiation(i) => instantiation(i, aliases),
        ast::Decl::Control(c) => {
            params(&mut c.signature.params, aliases);
            params(&mut c.ctor_params, aliases);
            for l in &mut c.locals {
                decl(l, aliases);
            }
            block(&mut c.apply, aliases);
        }
        ast::Decl::Parser(p) => {
            params(&mut p.signature.params, aliases);
            params(&mut p.ctor_params, aliases);
            for l in &mut p.locals {
                decl(l, aliases);
            }
            for s in &mut p.states {
                for st in &mut s.stmts {
                    stmt(st, aliases);
                }
            }
        }
        ast::Decl::Action(a) => params(&mut a.params, aliases),
        ast::Decl::Function(f) => params(&mut f.params, aliases),
        _ => {}
    }
}

fn block(b: &mut ast::Block, aliases: &mut Aliases) {
    for s in &mut b.stmts {
        stmt(s, aliases);
    }
}

fn stmt(s: &mut ast::Stmt, aliases: &mut Aliases) {
    use ast::StmtKind as K;
    match &mut s.kind {
        K::Instantiation(i) => instantiation(i, aliases),
        K::Block(b) => block(b, aliases),
        K::If {
            then_branch,
            else_branch,
            ..
        } => {
            stmt(then_branch, aliases);
            if let Some(e) = else_branch {
                stmt(e, aliases);
            }
        }
        K::For { body, .. } | K::ForIn { body, .. } => stmt(body, aliases),
        K::Switch { cases, .. } => {
            for c in cases {
                if let Some(b) = &mut c.body {
                    block(b, aliases);
                }
            }
        }
        _ => {}
    }
}
