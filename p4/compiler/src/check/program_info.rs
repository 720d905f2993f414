//! Builds the [`ProgramInfo`] of a checked program: the P4Info facts
//! (P4Runtime spec §6, P4Info) with p4c's fully qualified names
//! (`MyIngress.ipv4_lpm`; `@name(".x")` absolute, `@name("x")` local), and
//! its [`Layout`].
//!
//! Contract: one table/profile/counter/meter/register per control
//! *instance*, in instance order then declaration order; the layout's
//! per-instance index vectors point at them and the IR is left as the
//! checker built it. All data is owned (nothing is leaked), so compiling
//! many programs in one process keeps nothing of the ones dropped.
//!
//! This file holds the facts the checker records as it goes; `build`
//! builds the [`ProgramInfo`] from them, `ids` orders the P4Info objects
//! and hands out their ids, `externs` places extern instances.

mod build;
mod externs;
mod ids;

use crate::ir::info::*;
use crate::ir::{self, Handle};
pub(crate) use build::build_program_info;
use p4_target::runtime::FieldMatch;
use std::collections::HashMap;

/// A parser value set: full name, width of the concatenated element, size,
/// and the element's leaves (dotted name, width, signed) when it is a
/// struct, empty for a `bit<W>` or tuple element.
pub(crate) type ValueSetFacts = (String, u32, u32, Vec<(String, u32, bool)>);

/// A P4Info name as written with `@name`.
#[derive(Clone, Debug, Default)]
pub(crate) struct NameSpec {
    /// `@name(".x")`.
    pub(crate) absolute: bool,
    /// The name (without the leading dot).
    pub(crate) name: String,
    /// `@id(n)`.
    pub(crate) id: Option<u32>,
}

impl NameSpec {
    fn qualify(&self, prefix: &str) -> String {
        if self.absolute || prefix.is_empty() {
            self.name.clone()
        } else {
            format!("{prefix}.{}", self.name)
        }
    }
}

/// A digest the program sends (v1model `digest<T>(receiver, data)`).
#[derive(Clone, Debug)]
pub(crate) enum DigestFacts {
    /// Data of a struct or header type (or a tuple, made a struct).
    Struct(Handle<ir::Composite>),
    /// A bit string (`bit<W>`, `int<W>`, `bool`, a serializable enum).
    Scalar {
        /// The `typedef` name of the type argument, or `digest_N`.
        name: String,
        /// The data's type.
        ty: ir::Ty,
        /// The call (an unnamed type's digest is one per call).
        span: crate::diag::Span,
        /// Named `digest_N` (the type has no name).
        auto: bool,
    },
}

/// One `entries` item.
#[derive(Clone, Debug)]
pub(crate) struct EntryFacts {
    pub(crate) matches: Vec<Option<FieldMatch>>,
    pub(crate) priority: i32,
    pub(crate) action: Handle<ir::Action>,
    pub(crate) params: Vec<u128>,
}

/// What P4Info needs about a table beyond the IR.
#[derive(Clone, Debug, Default)]
pub(crate) struct TableFacts {
    pub(crate) name: NameSpec,
    pub(crate) size: u32,
    pub(crate) default: Option<(Handle<ir::Action>, Vec<u128>)>,
    pub(crate) default_is_const: bool,
    pub(crate) is_const: bool,
    pub(crate) entries: Vec<EntryFacts>,
    pub(crate) direct_counter: Option<u32>,
    pub(crate) direct_meter: Option<u32>,
    pub(crate) idle_timeout: bool,
    pub(crate) scopes: Vec<ActionScope>,
}

/// Facts gathered while checking.
#[derive(Clone, Debug, Default)]
pub(crate) struct Facts {
    /// By table handle index.
    pub(crate) tables: HashMap<usize, TableFacts>,
    /// By (control handle index, extern index).
    pub(crate) extern_names: HashMap<(usize, u32), NameSpec>,
    /// By (parser handle index, extern index).
    pub(crate) parser_extern_names: HashMap<(usize, u32), NameSpec>,
    /// By (function handle index, extern index).
    pub(crate) function_extern_names: HashMap<(usize, u32), NameSpec>,
    /// By (top-level action handle index, extern index).
    pub(crate) action_extern_names: HashMap<(usize, u32), NameSpec>,
    /// Digests, in first-use order.
    pub(crate) digests: Vec<DigestFacts>,
    /// Value sets: (full name, width, size, the element's leaves as
    /// (dotted name, width, signed) when it is a struct).
    pub(crate) value_sets: Vec<ValueSetFacts>,
    /// `@id(n)` of actions, by action handle index.
    pub(crate) action_explicit_ids: HashMap<usize, u32>,
    /// Actions called directly (not through a table), by handle index.
    pub(crate) called_actions: std::collections::HashSet<usize>,
    /// Top-level actions that call `mark_to_drop()` without an argument,
    /// directly or through another action: only controls with a
    /// standard_metadata_t parameter may use them.
    pub(crate) implicit_std_meta_actions: std::collections::HashSet<usize>,
    /// `direct_meter.read` calls in the action being checked: (extern
    /// index in its control, call span); moved to `meter_reads` when the
    /// action is appended.
    pub(crate) pending_meter_reads: Vec<(u32, crate::diag::Span)>,
    /// By action handle index: the direct meters the action reads, directly
    /// or through actions it calls (extern index in its control, span).
    pub(crate) meter_reads: HashMap<usize, Vec<(u32, crate::diag::Span)>>,
    /// `direct_counter.count` calls in the action being checked, as
    /// `pending_meter_reads`; moved to `counter_counts`.
    pub(crate) pending_counter_counts: Vec<(u32, crate::diag::Span)>,
    /// By action handle index: the direct counters the action counts,
    /// directly or through actions it calls (extern index, span).
    pub(crate) counter_counts: HashMap<usize, Vec<(u32, crate::diag::Span)>>,
}

impl Facts {
    /// Index of the digest for struct `c`, adding it on first use.
    pub(crate) fn digest_index(&mut self, c: Handle<ir::Composite>) -> u32 {
        let found = self
            .digests
            .iter()
            .position(|d| matches!(d, DigestFacts::Struct(s) if *s == c));
        match found {
            Some(i) => i as u32,
            None => {
                self.digests.push(DigestFacts::Struct(c));
                (self.digests.len() - 1) as u32
            }
        }
    }

    /// Index of the digest of a bit string of type `ty` sent at `span`:
    /// named `typedef_name` when the type argument names one (all calls
    /// with it share the digest), else `digest_N` for the N-th such call
    /// (p4c's name when the type has none).
    pub(crate) fn scalar_digest_index(
        &mut self,
        typedef_name: Option<String>,
        ty: ir::Ty,
        span: crate::diag::Span,
    ) -> u32 {
        let found = self.digests.iter().position(|d| match (d, &typedef_name) {
            (DigestFacts::Scalar { name, .. }, Some(n)) => name == n,
            (
                DigestFacts::Scalar {
                    span: s,
                    auto: true,
                    ..
                },
                None,
            ) => *s == span,
            _ => false,
        });
        if let Some(i) = found {
            return i as u32;
        }
        let auto = typedef_name.is_none();
        let name = typedef_name.unwrap_or_else(|| {
            let n = self
                .digests
                .iter()
                .filter(|d| matches!(d, DigestFacts::Scalar { auto: true, .. }))
                .count();
            format!("digest_{n}")
        });
        self.digests.push(DigestFacts::Scalar {
            name,
            ty,
            span,
            auto,
        });
        (self.digests.len() - 1) as u32
    }
}
