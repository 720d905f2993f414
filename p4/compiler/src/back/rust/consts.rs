//! Named constants in the generated module: the program's top-level
//! `const`s, and the runtime index and P4Info id of every table, action,
//! action profile, counter, meter, register, value set and digest, so that
//! drivers, tests and the generated code itself say
//! `tables::ROCE_INGRESS_IPV4_LPM` rather than a bare number or a name
//! looked up at run time.
//!
//! Naming rules (every name also passes through a [`Namer`], so it is a
//! valid identifier, and a name two declarations would share gets `_1`,
//! `_2`, ... on the later ones):
//! - **Program constants** sit in `pub mod consts`, re-exported at the top
//!   of the module (so a driver can re-export exactly the program's
//!   constants with `pub use generated::consts::*`), named after the P4
//!   name in SCREAMING_SNAKE_CASE ([`screaming_snake`]: `DROP_ACL` stays,
//!   `cpuPort` becomes `CPU_PORT`). Types: `bool` → `bool`; `bit<W>` (and a
//!   serializable enum over it) → the smallest of `u8`..`u128` holding `W`
//!   bits; `int<W>` → the smallest of `i8`..`i128`; the arbitrary-precision
//!   `int` → `i64` (`i128` if the value does not fit). `const`s of other
//!   types (`error`, plain enums, structs) are not emitted.
//! - **Object constants** sit in one submodule per kind: `tables`,
//!   `actions`, `action_profiles`, `counters`, `meters`, `registers`,
//!   `value_sets`, `digests` (every module exists, empty when the program
//!   has no object of that kind, so drivers can re-export them all). Each
//!   object's full P4Info name in SCREAMING_SNAKE_CASE
//!   (`RoceIngress.ipv4_lpm` → `ROCE_INGRESS_IPV4_LPM`) is a `usize`: its
//!   index in `PROGRAM_INFO`'s list of that kind and in the runtime's
//!   vector (`rt.tables[tables::ROCE_INGRESS_IPV4_LPM]`); the same name with
//!   `_ID` is its P4Info id (`u32`). Actions have only the `_ID` constant.
//!
//! Output order follows declaration order (constants) and `ProgramInfo`
//! order (objects), so it is deterministic.

use crate::ir::info::ProgramInfo;

use super::native_uint;
use super::writer::CodeWriter;
use crate::ir::{ConstValue, Program};
use crate::proc::namer::Namer;

/// Submodule names the object constants use; the top-level namer reserves
/// them so no generated type takes one.
pub(super) const MODULES: [&str; 9] = [
    "consts",
    "tables",
    "actions",
    "action_profiles",
    "counters",
    "meters",
    "registers",
    "value_sets",
    "digests",
];

/// `name` in SCREAMING_SNAKE_CASE: a `_` goes before an upper-case letter
/// that follows a lower-case letter or a digit, or that ends a run of
/// capitals before a lower-case letter (`HTTPPort` → `HTTP_PORT`); every
/// character Rust does not allow in identifiers becomes `_`; runs of `_`
/// collapse and leading or trailing ones go; letters are upper-cased.
pub fn screaming_snake(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    let mut out = String::with_capacity(name.len() + 4);
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_ascii_alphanumeric() {
            if !out.ends_with('_') {
                out.push('_');
            }
            continue;
        }
        if c.is_ascii_uppercase() && i > 0 {
            let prev = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase());
            let boundary = prev.is_ascii_lowercase()
                || prev.is_ascii_digit()
                || (prev.is_ascii_uppercase() && next_lower);
            if boundary && !out.ends_with('_') {
                out.push('_');
            }
        }
        out.push(c.to_ascii_uppercase());
    }
    let trimmed = out.trim_matches('_');
    if trimmed.is_empty() {
        out
    } else {
        trimmed.to_string()
    }
}

/// The names of one kind of object: per object in `ProgramInfo` order, the
/// index constant and the id constant.
#[derive(Debug, Default)]
pub(super) struct KindNames {
    /// Index constants (empty for actions, which have none).
    pub(super) index: Vec<String>,
    /// `_ID` constants.
    pub(super) id: Vec<String>,
}

/// Names of every object constant.
#[derive(Debug, Default)]
pub(super) struct ObjectNames {
    pub(super) tables: KindNames,
    pub(super) actions: KindNames,
    pub(super) profiles: KindNames,
    pub(super) counters: KindNames,
    pub(super) meters: KindNames,
    pub(super) registers: KindNames,
    pub(super) value_sets: KindNames,
    pub(super) digests: KindNames,
}

impl ObjectNames {
    /// `tables::NAME`, the path generated code uses to index `rt.tables`.
    pub(super) fn table(&self, index: usize) -> String {
        format!("tables::{}", self.tables.index[index])
    }

    /// `action_profiles::NAME`.
    pub(super) fn profile(&self, index: usize) -> String {
        format!("action_profiles::{}", self.profiles.index[index])
    }

    /// `counters::NAME`.
    pub(super) fn counter(&self, index: usize) -> String {
        format!("counters::{}", self.counters.index[index])
    }

    /// `meters::NAME`.
    pub(super) fn meter(&self, index: usize) -> String {
        format!("meters::{}", self.meters.index[index])
    }

    /// `registers::NAME`.
    pub(super) fn register(&self, index: usize) -> String {
        format!("registers::{}", self.registers.index[index])
    }
}

fn kind_names<'n>(names: impl Iterator<Item = &'n str>, with_index: bool) -> KindNames {
    let mut namer = Namer::default();
    let bases: Vec<String> = names.map(screaming_snake).collect();
    let index: Vec<String> = if with_index {
        bases.iter().map(|b| namer.fresh(b)).collect()
    } else {
        Vec::new()
    };
    let id = bases
        .iter()
        .enumerate()
        .map(|(i, b)| {
            // The id of an object whose index name was renamed follows it.
            let base = index.get(i).map_or(b.as_str(), String::as_str);
            namer.fresh(&format!("{base}_ID"))
        })
        .collect();
    KindNames { index, id }
}

/// Names the object constants of `info`.
pub(super) fn object_names(info: &ProgramInfo) -> ObjectNames {
    ObjectNames {
        tables: kind_names(info.tables.iter().map(|t| t.name.as_str()), true),
        actions: kind_names(info.actions.iter().map(|a| a.name.as_str()), false),
        profiles: kind_names(info.action_profiles.iter().map(|p| p.name.as_str()), true),
        counters: kind_names(info.counters.iter().map(|c| c.name.as_str()), true),
        meters: kind_names(info.meters.iter().map(|m| m.name.as_str()), true),
        registers: kind_names(info.registers.iter().map(|r| r.name.as_str()), true),
        value_sets: kind_names(info.value_sets.iter().map(|v| v.name.as_str()), true),
        digests: kind_names(info.digests.iter().map(|d| d.name.as_str()), true),
    }
}

/// Names the program constants (per `prog.constants` entry) with the
/// module's top-level namer, so they collide with no other top-level item.
pub(super) fn constant_names(prog: &Program, top: &mut Namer) -> Vec<String> {
    prog.constants
        .iter()
        .map(|c| top.fresh(&screaming_snake(&c.name)))
        .collect()
}

/// The Rust type, P4 type and literal of a constant.
fn typed_value(v: ConstValue) -> (String, String, String) {
    fn int_ty(width: u32) -> &'static str {
        match width {
            0..=8 => "i8",
            9..=16 => "i16",
            17..=32 => "i32",
            33..=64 => "i64",
            _ => "i128",
        }
    }
    fn unsigned(v: u128) -> String {
        if v < 256 {
            v.to_string()
        } else {
            format!("{v:#x}")
        }
    }
    match v {
        ConstValue::Bool(b) => ("bool".into(), "bool".into(), b.to_string()),
        ConstValue::Bit { width, value } => (
            native_uint(width).into(),
            format!("bit<{width}>"),
            unsigned(value),
        ),
        ConstValue::Int { width, value } => (
            int_ty(width).into(),
            format!("int<{width}>"),
            value.to_string(),
        ),
        ConstValue::Integer(value) => {
            let ty = if i64::try_from(value).is_ok() {
                "i64"
            } else {
                "i128"
            };
            (ty.into(), "int".into(), value.to_string())
        }
    }
}

/// Writes the program constants and the object submodules.
pub(super) fn write(
    w: &mut CodeWriter,
    prog: &Program,
    info: &ProgramInfo,
    constant_names: &[String],
    objects: &ObjectNames,
) {
    if !prog.constants.is_empty() {
        w.line("/// The program's top-level `const`s (also in scope at the top of this module).");
        w.open("pub mod consts {");
        for (c, name) in prog.constants.iter().zip(constant_names) {
            let (ty, p4_ty, value) = typed_value(c.value);
            w.line(format!("/// P4 `const {p4_ty} {}`.", c.name));
            w.line(format!("pub const {name}: {ty} = {value};"));
        }
        w.close("}");
        w.line("pub use consts::*;");
        w.line("");
    }
    // (module, what the objects are, their constant names, (P4Info name, id)).
    type Kind<'k> = (&'k str, &'k str, &'k KindNames, Vec<(&'k str, u32)>);
    let kinds: [Kind<'_>; 8] = [
        (
            "tables",
            "table",
            &objects.tables,
            info.tables
                .iter()
                .map(|t| (t.name.as_str(), t.id))
                .collect(),
        ),
        (
            "actions",
            "action",
            &objects.actions,
            info.actions
                .iter()
                .map(|a| (a.name.as_str(), a.id))
                .collect(),
        ),
        (
            "action_profiles",
            "action profile",
            &objects.profiles,
            info.action_profiles
                .iter()
                .map(|p| (p.name.as_str(), p.id))
                .collect(),
        ),
        (
            "counters",
            "counter",
            &objects.counters,
            info.counters
                .iter()
                .map(|c| (c.name.as_str(), c.id))
                .collect(),
        ),
        (
            "meters",
            "meter",
            &objects.meters,
            info.meters
                .iter()
                .map(|m| (m.name.as_str(), m.id))
                .collect(),
        ),
        (
            "registers",
            "register",
            &objects.registers,
            info.registers
                .iter()
                .map(|r| (r.name.as_str(), r.id))
                .collect(),
        ),
        (
            "value_sets",
            "value set",
            &objects.value_sets,
            info.value_sets
                .iter()
                .map(|v| (v.name.as_str(), v.id))
                .collect(),
        ),
        (
            "digests",
            "digest",
            &objects.digests,
            info.digests
                .iter()
                .map(|d| (d.name.as_str(), d.id))
                .collect(),
        ),
    ];
    debug_assert!(kinds.iter().map(|k| k.0).eq(MODULES[1..].iter().copied()));
    for (module, what, names, objs) in kinds {
        if module == "actions" {
            w.line(format!("/// P4Info ids of the program's {what}s."));
        } else {
            w.line(format!(
                "/// Each {what}'s index in `PROGRAM_INFO.{module}` and the runtime, and its P4Info id (`_ID`)."
            ));
        }
        w.open(format!("pub mod {module} {{"));
        for (i, (p4_name, id)) in objs.iter().enumerate() {
            if let Some(index_name) = names.index.get(i) {
                w.line(format!("/// `{p4_name}`."));
                w.line(format!("pub const {index_name}: usize = {i};"));
            }
            w.line(format!("/// P4Info id of `{p4_name}`."));
            w.line(format!("pub const {}: u32 = {id:#010x};", names.id[i]));
        }
        w.close("}");
        w.line("");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_become_screaming_snake_case() {
        assert_eq!(screaming_snake("DROP_ACL"), "DROP_ACL");
        assert_eq!(screaming_snake("cpuPort"), "CPU_PORT");
        assert_eq!(
            screaming_snake("RoceIngress.ipv4_lpm"),
            "ROCE_INGRESS_IPV4_LPM"
        );
        assert_eq!(screaming_snake("MyIngress.c.x"), "MY_INGRESS_C_X");
        assert_eq!(screaming_snake("HTTPPort"), "HTTP_PORT");
        assert_eq!(screaming_snake("ingress.t$0"), "INGRESS_T_0");
        assert_eq!(screaming_snake("_x_"), "X");
    }

    #[test]
    fn clashing_object_names_get_suffixes_and_ids_follow() {
        let k = kind_names(["I.a_b", "I.aB", "I.x"].into_iter(), true);
        assert_eq!(k.index, ["I_A_B", "I_A_B_1", "I_X"]);
        assert_eq!(k.id, ["I_A_B_ID", "I_A_B_1_ID", "I_X_ID"]);
        let a = kind_names(["NoAction"].into_iter(), false);
        assert!(a.index.is_empty());
        assert_eq!(a.id, ["NO_ACTION_ID"]);
    }

    #[test]
    fn constant_types_are_the_smallest_native_ones() {
        let t = |v| {
            let (ty, _, lit) = typed_value(v);
            format!("{ty} {lit}")
        };
        assert_eq!(
            t(ConstValue::Bit {
                width: 9,
                value: 510
            }),
            "u16 0x1fe"
        );
        assert_eq!(
            t(ConstValue::Bit {
                width: 32,
                value: 4
            }),
            "u32 4"
        );
        assert_eq!(
            t(ConstValue::Int {
                width: 8,
                value: -3
            }),
            "i8 -3"
        );
        assert_eq!(t(ConstValue::Integer(7)), "i64 7");
        assert_eq!(
            t(ConstValue::Integer(i128::MAX)),
            format!("i128 {}", i128::MAX)
        );
        assert_eq!(t(ConstValue::Bool(true)), "bool true");
    }
}
