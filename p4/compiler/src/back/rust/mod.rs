//! Rust back end: checked IR + `ProgramInfo` → one Rust source file.
//!
//! The output is meant to be `include!`d inside a module. It refers to the
//! runtime only as `::p4_target::...` and carries no inner attributes: its
//! items sit in one module under one `#[allow(..)]` and are re-exported
//! from it, laid out by prettyplease ([`layout`]). It defines
//! `PROGRAM_INFO`, `Program` (with `Program::new`), an implementation of
//! `::p4_target::pipeline::Pipeline`, and named constants for the
//! program's `const`s and the index and id of each table, counter,
//! register, ... (naming rules in [`consts`]).
//!
//! Shape of the generated code (P4_16 spec §12 parsers, §13 controls,
//! v1model for the package):
//! - headers/structs/unions → `Copy` structs of native integers (u8..u128 by
//!   width, always masked to the width), headers with a `valid` flag and
//!   `extract`/`emit`; stacks → `Stack<H, N>`;
//! - every bit-string expression is evaluated as a `u128` masked to its
//!   width, with the helpers of `::p4_target::bits`; above 128 bits, fields
//!   and values are `::p4_target::wide::Bits<L>` (`L` u64 limbs), also
//!   masked, with its methods (`wide` in expr.rs); values at most 128 bits
//!   wide keep the native code, whatever else is in the program;
//! - the parser is a loop over a state enum returning `Err(error_code)`;
//! - each control *instance* becomes free functions: `apply`, one per
//!   action, one per table. They take the runtime, an `Env` (hidden
//!   per-packet state: clone/resubmit requests, packet length, clock) and
//!   the control's parameters as `&mut`, and return `Result<_, Exit>` so that
//!   `exit` unwinds the whole control chain with `?`;
//! - arguments to `out`/`inout` parameters are copied in and out (§6.8).
//!
//! Nothing in the generated per-packet path allocates (except `digest`,
//! which the program asks for, and growing the caller's output buffer) or
//! uses dynamic dispatch. Output order follows declaration order, so it is
//! deterministic.

mod calls;
pub mod consts;
mod controls;
mod expr;
mod externs;
mod headers;
pub mod info;
mod layout;
mod lookahead;
mod parser;
mod pipeline;
mod stmt;
mod trace;
mod user_externs;
mod wire_sum;
use crate::ir::visit;
pub mod writer;
mod written;

use crate::ir::info::ProgramInfo;
use crate::ir::*;
use crate::proc::namer::{Namer, escape, field_ident};
use writer::CodeWriter;

/// Something the back end cannot translate.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct BackError {
    /// What is missing.
    pub message: String,
    /// Where.
    pub span: Option<Span>,
}

const BITS: &str = "::p4_target::bits";
const WIDE: &str = "::p4_target::wide::Bits";

/// The Rust type of a `width`-bit value above 128 bits.
fn wide_ty(width: u32) -> String {
    format!("{WIDE}<{}>", width.div_ceil(64))
}

/// `wide_ty` as a path for associated items (`Bits::<L>::ZERO`).
fn wide_path(width: u32) -> String {
    format!("{WIDE}::<{}>", width.div_ceil(64))
}

/// Parser states visited per packet before `ParserTimeout`.
const PARSER_MAX_STEPS: u32 = 4096;

/// Copy-in/copy-out code for a call: statements before it, the argument
/// list, statements after it.
type CallArgs = (Vec<String>, Vec<String>, Vec<String>);

/// Names chosen for declarations.
struct Names {
    composites: Vec<String>,
    enums: Vec<String>,
    functions: Vec<String>,
    /// Per control declaration: its locals struct.
    locals_structs: Vec<String>,
    /// Per control instance: apply fn, then per action handle (in
    /// `prog.actions` order) the fn name, and per table index the fn name.
    inst_apply: Vec<String>,
    inst_actions: Vec<Vec<(Handle<Action>, String)>>,
    inst_tables: Vec<Vec<String>>,
    parsers: Vec<String>,
    /// Per `prog.constants` entry: its `pub const` name.
    constants: Vec<String>,
    /// The object submodules' constants (`tables::X`, ...).
    objects: consts::ObjectNames,
    /// The program's user externs, if it has any.
    user: Option<user_externs::UserNames>,
}

/// Generates the Rust source for a checked program.
pub fn write(prog: &Program, info: &ProgramInfo, p4info_text: &str) -> Result<String, BackError> {
    Ok(write_with_externs(prog, info, p4info_text)?.0)
}

/// [`write`], also returning the user-defined externs the generated code
/// needs an implementation of (empty for most programs).
pub fn write_with_externs(
    prog: &Program,
    info: &ProgramInfo,
    p4info_text: &str,
) -> Result<(String, Vec<RequiredExtern>), BackError> {
    write_with(prog, info, p4info_text, &RustOptions::default())
}

/// Choices in what [`write_with`] generates.
#[derive(Clone, Debug)]
pub struct RustOptions {
    /// Generate the packet-trace points (`if rt.trace.on { .. }`).
    pub trace_points: bool,
}

impl Default for RustOptions {
    fn default() -> Self {
        RustOptions { trace_points: true }
    }
}

/// As [`write_with_externs`], with `opts`.
pub fn write_with(
    prog: &Program,
    info: &ProgramInfo,
    p4info_text: &str,
    opts: &RustOptions,
) -> Result<(String, Vec<RequiredExtern>), BackError> {
    let mut g = Gen::new(prog, info);
    g.trace_points = opts.trace_points;
    g.module(p4info_text)?;
    let required = g.required_externs();
    Ok((layout::file(&prog.name, &g.w.finish())?, required))
}

pub use user_externs::{RequiredExtern, missing_externs_message};

struct Gen<'a> {
    prog: &'a Program,
    info: &'a ProgramInfo,
    w: CodeWriter,
    names: Names,
    /// Labels of the loops enclosing the statement being written.
    loops: Vec<u32>,
    next_loop: u32,
    /// Write the packet-trace points ([`RustOptions::trace_points`]).
    trace_points: bool,
    /// Control instances that read the payload (`*_with_payload` checksums):
    /// a deparser among them cannot rewrite the frame in place.
    payload_readers: std::cell::RefCell<std::collections::BTreeSet<usize>>,
    /// Header types (composite indices) no statement writes as a whole
    /// after the parser: their headers remember where they were extracted
    /// and are not packed again when emitted there in place ([`written`]).
    wire_kept: std::collections::BTreeSet<usize>,
    /// Of `wire_kept`, the types some of whose fields (indices) statements
    /// write: emitted in place, only those fields' bits are patched.
    patched: std::collections::BTreeMap<usize, std::collections::BTreeSet<u32>>,
    /// Of `wire_kept`, the fields (indices) of each type that no statement
    /// writes and no expression reads: the byte-aligned `extract` leaves
    /// them undecoded, as emitting takes them from the wire bytes.
    undecoded: std::collections::BTreeMap<usize, std::collections::BTreeSet<u32>>,
    /// What may be written in headers before `verifyChecksum` has run
    /// ([`written::written_before_verify`]): a field list there may be
    /// summed from the wire bytes of headers whose fields in it are not.
    before_verify: Option<written::Written>,
    /// Header types no statement writes at all (only `extract` fills
    /// them): invalid, such a header still holds its reset value.
    never_written: std::collections::BTreeSet<usize>,
    /// Header types that `==`/`!=` compare ([`written::Read::compared`]):
    /// their Rust `PartialEq` is written out as P4's equality.
    compared: std::collections::BTreeSet<usize>,
}

/// Of header types `wire_kept`, the fields (indices) of each that no
/// statement writes (`patched` lists the written ones) and no expression
/// reads ([`Gen::undecoded`]).
fn undecoded_fields(
    prog: &Program,
    wire_kept: &std::collections::BTreeSet<usize>,
    patched: &std::collections::BTreeMap<usize, std::collections::BTreeSet<u32>>,
    read: &written::Read,
) -> std::collections::BTreeMap<usize, std::collections::BTreeSet<u32>> {
    prog.composites
        .iter()
        .map(|(h, c)| (h.index(), c.fields.len() as u32))
        .filter(|(h, _)| wire_kept.contains(h) && !read.whole.contains(h))
        .filter_map(|(h, fields)| {
            let used = |f: &u32| {
                patched.get(&h).is_some_and(|w| w.contains(f))
                    || read.fields.get(&h).is_some_and(|r| r.contains(f))
            };
            let unused: std::collections::BTreeSet<u32> =
                (0..fields).filter(|f| !used(f)).collect();
            (!unused.is_empty()).then_some((h, unused))
        })
        .collect()
}

/// Where a body's variables live.
#[derive(Clone, Copy, PartialEq, Eq)]
enum BodyKind {
    /// Control apply block, action or table (`l` is the locals struct, block
    /// params are `&mut`).
    Control,
    /// A function: the runtime (`rt`) only when it uses `hash` or `random`
    /// ([`Gen::function_uses_runtime`]).
    Function,
    /// A parser: locals hoisted, errors are `Err(code)`.
    Parser,
}

struct Ctx<'b> {
    kind: BodyKind,
    vars: &'b [Var],
    var_names: Vec<String>,
    block_params: Vec<String>,
    block_locals: Vec<String>,
    /// The control instance whose objects are used.
    inst: Option<usize>,
    /// In a parser, a function or a top-level action: where its extern
    /// instances are (`info::Layout::parsers`/`functions`/`actions`);
    /// `None` in a control's own blocks, which use `inst`'s.
    externs: Option<Vec<u32>>,
    /// Rust argument list passing the block context on to actions/tables.
    pass: String,
    tmp: std::cell::Cell<u32>,
}

impl Ctx<'_> {
    fn tmp(&self, base: &str) -> String {
        let n = self.tmp.get();
        self.tmp.set(n + 1);
        format!("{base}__{n}")
    }
}

/// A run of consecutive header fields that starts and ends on a byte
/// boundary and fits one machine word, so extract and emit move it with a
/// single load or store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    /// Offset of the first byte within the header.
    pub byte_offset: usize,
    /// Length in bytes (1..=16).
    pub bytes: usize,
    /// (field index, right shift within the word, width) per field.
    pub fields: Vec<(usize, u32, u32)>,
}

impl Chunk {
    /// The Rust word type holding the chunk, and its size in bytes.
    pub fn word(&self) -> (&'static str, usize) {
        if self.bytes <= 8 {
            ("u64", 8)
        } else {
            ("u128", 16)
        }
    }
}

/// Splits a header's field widths into [`Chunk`]s: greedily, closing a
/// chunk at a byte boundary before it would pass 64 bits, and allowing up
/// to 128 bits when no earlier boundary exists. `None` when a layout needs
/// more (the caller falls back to per-field bit access).
pub fn header_chunks(widths: &[u32]) -> Option<Vec<Chunk>> {
    let mut chunks = Vec::new();
    let mut cur: Vec<(usize, u32)> = Vec::new();
    let mut cur_bits = 0u32;
    let mut start_bit = 0u32;
    let flush = |cur: &mut Vec<(usize, u32)>, bits: u32, start: u32, out: &mut Vec<Chunk>| {
        let mut used = 0;
        let fields = cur
            .drain(..)
            .map(|(i, w)| {
                used += w;
                (i, bits - used, w)
            })
            .collect();
        out.push(Chunk {
            byte_offset: (start / 8) as usize,
            bytes: (bits / 8) as usize,
            fields,
        });
    };
    for (i, &w) in widths.iter().enumerate() {
        if w == 0 || w > 128 {
            return None;
        }
        if cur_bits > 0 && cur_bits.is_multiple_of(8) && cur_bits + w > 64 {
            flush(&mut cur, cur_bits, start_bit, &mut chunks);
            start_bit += cur_bits;
            cur_bits = 0;
        }
        if cur_bits + w > 128 {
            return None;
        }
        cur.push((i, w));
        cur_bits += w;
    }
    if !cur_bits.is_multiple_of(8) {
        return None;
    }
    if cur_bits > 0 {
        flush(&mut cur, cur_bits, start_bit, &mut chunks);
    }
    Some(chunks)
}

/// `0x…` literal of a `width`-bit all-ones mask.
fn mask_literal(width: u32) -> String {
    if width >= 128 {
        "u128::MAX".to_string()
    } else {
        format!("{:#x}", (1u128 << width) - 1)
    }
}

/// Native Rust type holding a `bit<W>`/`int<W>`.
pub fn native_uint(width: u32) -> &'static str {
    match width {
        0..=8 => "u8",
        9..=16 => "u16",
        17..=32 => "u32",
        33..=64 => "u64",
        _ => "u128",
    }
}

/// A `u128` literal as generated code writes it: decimal below 10, hex from
/// there on (masks and wide constants read better in hex).
fn lit(v: u128) -> String {
    if v < 10 {
        format!("{v}u128")
    } else {
        format!("{v:#x}u128")
    }
}

fn bad<T>(msg: impl Into<String>, span: Option<Span>) -> Result<T, BackError> {
    Err(BackError {
        message: msg.into(),
        span,
    })
}

impl<'a> Gen<'a> {
    fn new(prog: &'a Program, info: &'a ProgramInfo) -> Self {
        let mut reserved = vec![
            "Program",
            "Packet",
            "PacketIn",
            "PacketOut",
            "Env",
            "Exit",
            "ApplyResult",
            "Stack",
            "Varbit",
            "csum16_with_payload",
            "PROGRAM_INFO",
        ];
        reserved.extend(consts::MODULES);
        let mut top = Namer::with_reserved(&reserved);
        let composites = prog
            .composites
            .iter()
            .map(|(_, c)| top.fresh(&c.name.to_string()))
            .collect();
        let enums = prog.enums.iter().map(|(_, e)| top.fresh(&e.name)).collect();
        let functions = prog
            .functions
            .iter()
            .map(|(_, f)| top.fresh(&format!("fn_{}", f.name)))
            .collect();
        let locals_structs = prog
            .controls
            .iter()
            .map(|(_, c)| top.fresh(&format!("{}_Locals", c.name)))
            .collect();
        let parsers = prog
            .parsers
            .iter()
            .map(|(_, p)| top.fresh(&format!("parser_{}", p.name)))
            .collect();
        let mut inst_apply = Vec::new();
        let mut inst_actions = Vec::new();
        let mut inst_tables = Vec::new();
        for inst in &prog.instances {
            inst_apply.push(top.fresh(&format!("{}_apply", inst.path)));
            let c = &prog.controls[inst.control];
            let mut acts = Vec::new();
            for a in Self::actions_of(prog, inst.control) {
                acts.push((
                    a,
                    top.fresh(&format!("{}_{}", inst.path, prog.actions[a].name)),
                ));
            }
            inst_actions.push(acts);
            inst_tables.push(
                c.tables
                    .iter()
                    .map(|t| top.fresh(&format!("{}_{}", inst.path, prog.tables[*t].name)))
                    .collect(),
            );
        }
        // Last, so that adding constants renames nothing declared before.
        let constants = consts::constant_names(prog, &mut top);
        let user = user_externs::UserNames::new(prog, &info.layout.user_instances, &mut top);
        let mut written = written::written_headers(prog);
        let never_written = prog
            .composites
            .iter()
            .filter(|(h, c)| {
                c.kind == CompositeKind::Header
                    && !written.whole.contains(&h.index())
                    && !written.fields.contains_key(&h.index())
            })
            .map(|(h, _)| h.index())
            .collect();
        let wire_kept: std::collections::BTreeSet<usize> = prog
            .composites
            .iter()
            .filter(|(h, c)| {
                c.kind == CompositeKind::Header
                    && c.varbit().is_none()
                    && !written.whole.contains(&h.index())
            })
            .map(|(h, _)| h.index())
            .collect();
        written.fields.retain(|h, _| wire_kept.contains(h));
        let before_verify = written::written_before_verify(prog);
        let mut g = Gen {
            prog,
            info,
            loops: Vec::new(),
            next_loop: 0,
            trace_points: true,
            payload_readers: Default::default(),
            wire_kept,
            patched: written.fields,
            undecoded: Default::default(),
            before_verify,
            never_written,
            compared: Default::default(),
            w: CodeWriter::default(),
            names: Names {
                composites,
                enums,
                functions,
                locals_structs,
                inst_apply,
                inst_actions,
                inst_tables,
                parsers,
                constants,
                objects: consts::object_names(info),
                user,
            },
        };
        // What expressions read leaves out the checksum members summed
        // from wire bytes, which `g` answers.
        let read = written::read_headers(prog, &|inst, b| g.wire_unsummed(inst, b));
        g.undecoded = undecoded_fields(prog, &g.wire_kept, &g.patched, &read);
        g.compared = read.compared;
        g
    }

    /// Actions a control instance needs functions for: its own and every
    /// top-level action referenced by its tables or apply block.
    fn actions_of(prog: &Program, c: Handle<Control>) -> Vec<Handle<Action>> {
        let mut v: Vec<Handle<Action>> = prog.controls[c].actions.clone();
        for (h, a) in prog.actions.iter() {
            if a.control.is_none() && !v.contains(&h) {
                v.push(h);
            }
        }
        v
    }

    // ---------------------------------------------------------------- types

    fn rust_ty(&self, ty: &Ty) -> Result<String, BackError> {
        Ok(match ty {
            Ty::Bool => "bool".into(),
            Ty::Bit(w) | Ty::Int(w) if *w > 128 => wide_ty(*w),
            Ty::Bit(w) | Ty::Int(w) => native_uint(*w).into(),
            Ty::SerEnum(e) => {
                let w = self.prog.enums[*e]
                    .repr
                    .as_ref()
                    .and_then(|r| r.scalar_width(self.prog))
                    .unwrap_or(32);
                if w > 128 {
                    wide_ty(w)
                } else {
                    native_uint(w).into()
                }
            }
            Ty::Error | Ty::Enum(_) => "u32".into(),
            Ty::Composite(c) => {
                if self.is_std_meta(*c) {
                    "::p4_target::v1model::StandardMetadata".into()
                } else {
                    self.names.composites[c.index()].clone()
                }
            }
            Ty::Stack(elem, n) => format!("Stack<{}, {n}>", self.rust_ty(elem)?),
            Ty::Varbit(w) => format!("Varbit<{}>", w.div_ceil(8)),
            Ty::Tuple(items) => {
                let mut parts = Vec::new();
                for t in items {
                    parts.push(self.rust_ty(t)?);
                }
                format!("({},)", parts.join(", "))
            }
            Ty::Str | Ty::Void => {
                return bad("internal: value of no storable type", None);
            }
        })
    }

    fn is_std_meta(&self, c: Handle<Composite>) -> bool {
        self.prog.composites[c].name == "standard_metadata_t"
    }

    /// Whether the type is held as a `u128` in expressions.
    fn is_bits(&self, ty: &Ty) -> bool {
        matches!(ty, Ty::Bit(_) | Ty::Int(_) | Ty::SerEnum(_))
    }

    fn width(&self, ty: &Ty) -> u32 {
        ty.scalar_width(self.prog).unwrap_or(32)
    }

    /// Whether the type is a bit string wider than 128 bits (held as a
    /// `wide::Bits` in expressions and storage alike).
    fn is_wide(&self, ty: &Ty) -> bool {
        self.is_bits(ty) && self.width(ty) > 128
    }

    /// An error for a construct not supported yet on values above 128 bits.
    fn refuse_wide<T>(&self, what: &str, span: Option<Span>) -> Result<T, BackError> {
        let of = if what.ends_with(" is") { "" } else { " of" };
        bad(
            format!("not supported yet: {what}{of} a bit string wider than 128 bits"),
            span,
        )
    }

    /// Bits a register cell of this value's type takes (its scalars'
    /// [`Self::cell_width`]s added up).
    fn cell_bits(&self, e: &Expr) -> u32 {
        let mut fields = Vec::new();
        self.flatten(std::slice::from_ref(e), &mut fields);
        fields.iter().map(|f| self.cell_width(&f.ty)).sum()
    }

    /// Bits a scalar takes in a register cell (a `bool` is one bit).
    fn cell_width(&self, ty: &Ty) -> u32 {
        if *ty == Ty::Bool { 1 } else { self.width(ty) }
    }

    /// Converts a canonical expression value to the native storage type.
    fn to_native(&self, e: &str, ty: &Ty) -> Result<String, BackError> {
        if self.is_wide(ty) {
            Ok(e.to_string())
        } else if self.is_bits(ty) {
            let n = self.rust_ty(ty)?;
            if n == "u128" {
                Ok(e.to_string())
            } else {
                Ok(format!("({e} as {n})"))
            }
        } else {
            Ok(e.to_string())
        }
    }

    /// Converts a native place/value to the canonical expression value.
    fn native_to_value(&self, e: &str, ty: &Ty) -> String {
        if self.is_wide(ty) {
            e.to_string()
        } else if self.is_bits(ty) {
            format!("({e} as u128)")
        } else {
            e.to_string()
        }
    }

    fn default_value(&self, ty: &Ty) -> Result<String, BackError> {
        Ok(match ty {
            Ty::Bool => "false".into(),
            t if self.is_wide(t) => format!("{}::ZERO", wide_path(self.width(t))),
            Ty::Bit(_) | Ty::Int(_) | Ty::SerEnum(_) => format!("0{}", self.rust_ty(ty)?),
            Ty::Error | Ty::Enum(_) => "0u32".into(),
            _ => format!("<{} as Default>::default()", self.rust_ty(ty)?),
        })
    }

    // --------------------------------------------------------------- module

    fn module(&mut self, p4info_text: &str) -> Result<(), BackError> {
        let main = match &self.prog.main {
            Some(m) => m.clone(),
            None => return bad("the program has no `main` package instance", None),
        };
        let info = info::program_info_expr(self.info, &layout::raw_string(p4info_text));
        self.w.line("/// The program's P4Info facts.");
        let mut first = true;
        for l in
            format!("pub static PROGRAM_INFO: ::p4_target::info::ProgramInfo = {info};").lines()
        {
            if first {
                self.w.line(l);
                first = false;
            } else {
                // Already indented by info::program_info_expr.
                self.w.line(l);
            }
        }
        self.w.line("");
        consts::write(
            &mut self.w,
            self.prog,
            self.info,
            &self.names.constants,
            &self.names.objects,
        );
        self.support();
        self.types()?;
        self.user_extern_items()?;
        for (h, _) in self.prog.functions.iter() {
            self.function(h)?;
        }
        for (h, _) in self.prog.parsers.iter() {
            self.parser(h)?;
        }
        for (h, _) in self.prog.controls.iter() {
            self.locals_struct(h)?;
        }
        for i in 0..self.prog.instances.len() {
            self.instance(i)?;
        }
        self.pipeline(&main)?;
        Ok(())
    }

    /// Helper types every generated program uses (they live in
    /// `p4_target::support`).
    fn support(&mut self) {
        let w = &mut self.w;
        w.line("use ::p4_target::support::{");
        w.line(
            "    ApplyResult, Env, Exit, PacketIn, PacketOut, Stack, Varbit, csum16_with_payload,",
        );
        w.line("};");
        w.line("");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv4_header_packs_into_three_words() {
        // version, ihl, dscp, ecn, total_len, id, flags, frag, ttl, proto, csum, src, dst
        let w = [4, 4, 6, 2, 16, 16, 3, 13, 8, 8, 16, 32, 32];
        let chunks = header_chunks(&w).unwrap();
        let shape: Vec<(usize, usize)> = chunks.iter().map(|c| (c.byte_offset, c.bytes)).collect();
        assert_eq!(shape, [(0, 8), (8, 8), (16, 4)]);
        assert_eq!(chunks[0].fields[0], (0, 60, 4), "version is the top nibble");
        assert_eq!(
            chunks[0].fields[7],
            (7, 0, 13),
            "frag_offset ends the first word"
        );
        assert_eq!(chunks[2].fields, [(12, 0, 32)]);
    }

    #[test]
    fn unaligned_runs_grow_to_128_bits_or_give_up() {
        // 4 + 64 + 4 bits: no byte boundary before 72 bits.
        let chunks = header_chunks(&[4, 64, 4]).unwrap();
        assert_eq!(chunks.len(), 1);
        assert_eq!((chunks[0].bytes, chunks[0].word().0), (9, "u128"));
        // 4 + 128 + 4 needs more than a word: per-field access instead.
        assert_eq!(header_chunks(&[4, 128, 4]), None);
        // IPv6 addresses are whole 128-bit chunks.
        let v6 = header_chunks(&[4, 8, 20, 16, 8, 8, 128, 128]).unwrap();
        assert_eq!(v6.iter().map(|c| c.bytes).collect::<Vec<_>>(), [8, 16, 16]);
    }
}
