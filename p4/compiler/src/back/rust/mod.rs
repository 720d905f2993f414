//! Rust back end: checked IR + `ProgramInfo` → one Rust source file.
//!
//! The output is meant to be `include!`d inside a module. It refers to the
//! runtime only as `::p4_target::...`, carries no inner attributes, and puts
//! `#[allow(..)]` on each item so it compiles without warnings. It defines
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
//!   width, with the helpers of `::p4_target::bits`;
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

pub mod consts;
pub mod info;
pub mod writer;

use crate::ir::*;
use crate::proc::namer::{Namer, escape};
use p4_target::info::ProgramInfo;
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

const ALLOW: &str = "#[allow(non_snake_case, non_camel_case_types, non_upper_case_globals, unused_mut, unused_variables, unused_assignments, unused_parens, unused_braces, unreachable_code, unreachable_patterns, unused_labels, unused_comparisons, dead_code, clippy::all)]";

const BITS: &str = "::p4_target::bits";

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
}

/// Generates the Rust source for a checked program.
pub fn write(prog: &Program, info: &ProgramInfo, p4info_text: &str) -> Result<String, BackError> {
    let mut g = Gen::new(prog, info);
    g.module(p4info_text)?;
    Ok(g.w.finish())
}

struct Gen<'a> {
    prog: &'a Program,
    info: &'a ProgramInfo,
    w: CodeWriter,
    names: Names,
    /// Labels of the loops enclosing the statement being written.
    loops: Vec<u32>,
    next_loop: u32,
}

/// Where a body's variables live.
#[derive(Clone, Copy, PartialEq, Eq)]
enum BodyKind {
    /// Control apply block, action or table (`l` is the locals struct, block
    /// params are `&mut`).
    Control,
    /// A function: no runtime access.
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

/// The Rust name of a P4 struct/header field: keywords escaped, and `valid`
/// (which every generated header has) renamed to `valid_`.
fn field_ident(name: &str) -> String {
    if name == "valid" {
        "valid_".to_string()
    } else {
        escape(name)
    }
}

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
        Gen {
            prog,
            info,
            loops: Vec::new(),
            next_loop: 0,
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
            },
        }
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
            Ty::Bit(w) | Ty::Int(w) => native_uint(*w).into(),
            Ty::SerEnum(e) => {
                let w = self.prog.enums[*e]
                    .repr
                    .as_ref()
                    .and_then(|r| r.scalar_width(self.prog))
                    .unwrap_or(32);
                native_uint(w).into()
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

    /// Converts a canonical expression value to the native storage type.
    fn to_native(&self, e: &str, ty: &Ty) -> Result<String, BackError> {
        if self.is_bits(ty) {
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
        if self.is_bits(ty) {
            format!("({e} as u128)")
        } else {
            e.to_string()
        }
    }

    fn default_value(&self, ty: &Ty) -> Result<String, BackError> {
        Ok(match ty {
            Ty::Bool => "false".into(),
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
        self.w.line(format!(
            "// Generated by p4-to-rust from `{}`. Do not edit.",
            self.prog.name
        ));
        self.w.line("");
        let info = info::program_info_expr(self.info, &format!("{p4info_text:?}"));
        self.w.line("/// The program's P4Info facts.");
        self.w.line(ALLOW);
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
        w.line("#[allow(unused_imports)]");
        w.line("use ::p4_target::support::{ApplyResult, Env, Exit, PacketIn, Stack, Varbit, csum16_with_payload};");
        w.line("");
    }

    fn types(&mut self) -> Result<(), BackError> {
        for (h, e) in self.prog.enums.iter() {
            let name = self.names.enums[h.index()].clone();
            let ty = match &e.repr {
                Some(r) => self.rust_ty(r)?,
                None => "u32".into(),
            };
            self.w.line(format!("/// Members of `enum {}`.", e.name));
            self.w.line(ALLOW);
            self.w.open(format!("pub mod {name} {{"));
            for (m, v) in &e.members {
                self.w.line(format!("pub const {}: {ty} = {v};", escape(m)));
            }
            self.w.close("}");
            self.w.line("");
        }
        for (h, c) in self.prog.composites.iter() {
            if self.is_std_meta(h) {
                continue;
            }
            let name = self.names.composites[h.index()].clone();
            let kind = match c.kind {
                CompositeKind::Header => "header",
                CompositeKind::Union => "header_union",
                CompositeKind::Struct => "struct",
            };
            self.w.line(format!("/// P4 `{kind} {}`.", c.name));
            self.w.line(ALLOW);
            self.w
                .line("#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]");
            self.w.open(format!("pub struct {name} {{"));
            if c.kind == CompositeKind::Header {
                self.w.line("pub valid: bool,");
            }
            for f in &c.fields {
                let t = match self.rust_ty(&f.ty) {
                    Ok(t) => t,
                    Err(mut e) => {
                        e.span = Some(f.span);
                        return Err(e);
                    }
                };
                self.w.line(format!("pub {}: {t},", field_ident(&f.name)));
            }
            self.w.close("}");
            self.w.line("");
            match c.kind {
                CompositeKind::Header => self.header_impl(h)?,
                CompositeKind::Union => self.union_impl(h)?,
                CompositeKind::Struct => {}
            }
        }
        Ok(())
    }

    fn header_impl(&mut self, h: Handle<Composite>) -> Result<(), BackError> {
        if self.prog.composites[h].varbit().is_some() {
            return self.varbit_header_impl(h);
        }
        let c = &self.prog.composites[h];
        let name = &self.names.composites[h.index()];
        let bits = c.header_bits(self.prog);
        if !bits.is_multiple_of(8) {
            return bad(
                format!(
                    "header `{}` is {bits} bits, not a whole number of bytes",
                    c.name
                ),
                None,
            );
        }
        let w = &mut self.w;
        w.line(ALLOW);
        w.open(format!("impl {name} {{"));
        w.line(format!("pub const BITS: usize = {bits};"));
        w.line(format!("pub const BYTES: usize = {};", bits / 8));
        w.line("/// Extracts the header at the cursor; `false` if the packet is too short.");
        w.line("#[inline]");
        w.open("pub fn extract(&mut self, p: &mut PacketIn<'_>) -> bool {");
        w.open("if p.data.len() * 8 < p.off_bits + Self::BITS {");
        w.line("return false;");
        w.close("}");
        let fields: Vec<(String, u32, bool)> = c
            .fields
            .iter()
            .map(|f| {
                (
                    field_ident(&f.name),
                    f.ty.scalar_width(self.prog).unwrap_or(0),
                    matches!(f.ty, Ty::Bool),
                )
            })
            .collect();
        let chunks = header_chunks(&fields.iter().map(|f| f.1).collect::<Vec<_>>());
        if let Some(chunks) = &chunks {
            // Byte-aligned cursor (the usual case): one load per chunk.
            w.open("if p.off_bits % 8 == 0 {");
            w.line("let d = &p.data[p.off_bits / 8..p.off_bits / 8 + Self::BYTES];");
            for ch in chunks {
                let (word, nbytes) = ch.word();
                w.open("{");
                w.line(format!("let mut a = [0u8; {nbytes}];"));
                w.line(format!(
                    "a[{}..].copy_from_slice(&d[{}..{}]);",
                    nbytes - ch.bytes,
                    ch.byte_offset,
                    ch.byte_offset + ch.bytes
                ));
                w.line(format!("let w = {word}::from_be_bytes(a);"));
                for &(i, shift, width) in &ch.fields {
                    let (ident, _, is_bool) = &fields[i];
                    let m = mask_literal(width);
                    let v = if *is_bool {
                        format!("(w >> {shift}) & 1 != 0")
                    } else {
                        format!("((w >> {shift}) & {m}) as {}", native_uint(width))
                    };
                    w.line(format!("self.{ident} = {v};"));
                }
                w.close("}");
            }
            w.line("self.valid = true;");
            w.line("p.off_bits += Self::BITS;");
            w.line("return true;");
            w.close("}");
        }
        w.line("let d = p.data;");
        w.line("let o = p.off_bits;");
        let mut off = 0;
        for f in &c.fields {
            let fw = f.ty.scalar_width(self.prog).unwrap_or(0);
            let read = format!("::p4_target::packet::read_bits(d, o + {off}, {fw})");
            let v = match f.ty {
                Ty::Bool => format!("{read} != 0"),
                _ => {
                    let n = native_uint(fw);
                    if n == "u128" {
                        read
                    } else {
                        format!("{read} as {n}")
                    }
                }
            };
            w.line(format!("self.{} = {v};", field_ident(&f.name)));
            off += fw;
        }
        w.line("self.valid = true;");
        w.line("p.off_bits += Self::BITS;");
        w.line("true");
        w.close("}");
        w.line("/// Appends the header's bytes to `out` if it is valid.");
        w.line("#[inline]");
        w.open("pub fn emit(&self, out: &mut Vec<u8>) {");
        w.open("if !self.valid {");
        w.line("return;");
        w.close("}");
        w.line("let mut d = [0u8; Self::BYTES];");
        if let Some(chunks) = &chunks {
            // Each chunk's fields are shifted into one word, stored once.
            for ch in chunks {
                let (word, nbytes) = ch.word();
                let parts: Vec<String> = ch
                    .fields
                    .iter()
                    .map(|&(i, shift, width)| {
                        format!(
                            "((self.{} as {word}) & {}) << {shift}",
                            fields[i].0,
                            mask_literal(width)
                        )
                    })
                    .collect();
                w.line(format!(
                    "d[{}..{}].copy_from_slice(&({}).to_be_bytes()[{}..]);",
                    ch.byte_offset,
                    ch.byte_offset + ch.bytes,
                    parts.join(" | "),
                    nbytes - ch.bytes
                ));
            }
        } else {
            let mut off = 0;
            for (ident, fw, _) in &fields {
                w.line(format!(
                    "::p4_target::packet::write_bits(&mut d, {off}, {fw}, self.{ident} as u128);"
                ));
                off += fw;
            }
        }
        w.line("out.extend_from_slice(&d);");
        w.close("}");
        w.close("}");
        w.line("");
        Ok(())
    }

    /// A header with a varbit field: fields after it sit at run-time offsets.
    fn varbit_header_impl(&mut self, h: Handle<Composite>) -> Result<(), BackError> {
        let c = &self.prog.composites[h];
        let name = &self.names.composites[h.index()];
        let fixed = c.fixed_bits(self.prog);
        let Some((_, max)) = c.varbit() else {
            return bad("internal: no varbit field", None);
        };
        if !(fixed + max).is_multiple_of(8) || !fixed.is_multiple_of(8) {
            return bad(
                format!("header `{}` is not a whole number of bytes", c.name),
                None,
            );
        }
        const E: &str = "::p4_target::v1model::error_code";
        let w = &mut self.w;
        w.line(ALLOW);
        w.open(format!("impl {name} {{"));
        w.line(format!("pub const FIXED_BITS: usize = {fixed};"));
        w.line(format!("pub const MAX_VAR_BITS: u32 = {max};"));
        w.line("/// Extracts the header with `var_bits` bits in its varbit field.");
        w.open("pub fn extract_var(&mut self, p: &mut PacketIn<'_>, var_bits: u32) -> Result<(), u32> {");
        w.open("if var_bits > Self::MAX_VAR_BITS {");
        w.line(format!("return Err({E}::HEADER_TOO_SHORT);"));
        w.close("}");
        w.open("if var_bits % 8 != 0 {");
        w.line(format!("return Err({E}::PARSER_INVALID_ARGUMENT);"));
        w.close("}");
        w.open("if p.data.len() * 8 < p.off_bits + Self::FIXED_BITS + var_bits as usize {");
        w.line(format!("return Err({E}::PACKET_TOO_SHORT);"));
        w.close("}");
        w.line("let d = p.data;");
        w.line("let mut o = p.off_bits;");
        for f in &c.fields {
            let fname = field_ident(&f.name);
            match f.ty {
                Ty::Varbit(_) => {
                    w.line(format!("self.{fname}.len_bits = var_bits;"));
                    w.open("for i in 0..(var_bits / 8) as usize {");
                    w.line(format!(
                        "self.{fname}.bytes[i] = ::p4_target::packet::read_bits(d, o + 8 * i, 8) as u8;"
                    ));
                    w.close("}");
                    w.line("o += var_bits as usize;");
                }
                _ => {
                    let fw = f.ty.scalar_width(self.prog).unwrap_or(0);
                    let read = format!("::p4_target::packet::read_bits(d, o, {fw})");
                    let v = match f.ty {
                        Ty::Bool => format!("{read} != 0"),
                        _ => format!("{read} as {}", native_uint(fw)),
                    };
                    w.line(format!("self.{fname} = {v};"));
                    w.line(format!("o += {fw};"));
                }
            }
        }
        w.line("self.valid = true;");
        w.line("p.off_bits = o;");
        w.line("Ok(())");
        w.close("}");
        w.line("/// Appends the header's bytes to `out` if it is valid.");
        w.open("pub fn emit(&self, out: &mut Vec<u8>) {");
        w.open("if !self.valid {");
        w.line("return;");
        w.close("}");
        let vname = c
            .fields
            .iter()
            .find(|f| matches!(f.ty, Ty::Varbit(_)))
            .map(|f| field_ident(&f.name))
            .unwrap_or_default();
        w.line(format!("let var = self.{vname}.used().len() * 8;"));
        w.line("let start = out.len();");
        w.line("out.resize(start + (Self::FIXED_BITS + var) / 8, 0);");
        w.line("let d = &mut out[start..];");
        w.line("let mut o = 0usize;");
        for f in &c.fields {
            let fname = field_ident(&f.name);
            match f.ty {
                Ty::Varbit(_) => {
                    w.open(format!("for &b in self.{fname}.used() {{"));
                    w.line("::p4_target::packet::write_bits(d, o, 8, b as u128);");
                    w.line("o += 8;");
                    w.close("}");
                }
                _ => {
                    let fw = f.ty.scalar_width(self.prog).unwrap_or(0);
                    w.line(format!(
                        "::p4_target::packet::write_bits(d, o, {fw}, self.{fname} as u128);"
                    ));
                    w.line(format!("o += {fw};"));
                }
            }
        }
        w.close("}");
        w.close("}");
        w.line("");
        Ok(())
    }

    fn union_impl(&mut self, h: Handle<Composite>) -> Result<(), BackError> {
        let c = &self.prog.composites[h];
        let name = &self.names.composites[h.index()];
        let w = &mut self.w;
        w.line(ALLOW);
        w.open(format!("impl {name} {{"));
        w.open("pub fn is_valid(&self) -> bool {");
        let parts: Vec<String> = c
            .fields
            .iter()
            .map(|f| format!("self.{}.valid", field_ident(&f.name)))
            .collect();
        w.line(if parts.is_empty() {
            "false".to_string()
        } else {
            parts.join(" || ")
        });
        w.close("}");
        w.open("pub fn invalidate(&mut self) {");
        for f in &c.fields {
            w.line(format!("self.{}.valid = false;", field_ident(&f.name)));
        }
        w.close("}");
        w.open("pub fn emit(&self, out: &mut Vec<u8>) {");
        for f in &c.fields {
            w.line(format!("self.{}.emit(out);", field_ident(&f.name)));
        }
        w.close("}");
        w.close("}");
        w.line("");
        Ok(())
    }

    // --------------------------------------------------------- expressions

    fn var_place(&self, ctx: &Ctx<'_>, v: VarRef) -> String {
        match v {
            VarRef::Local(i) => {
                let var = &ctx.vars[i as usize];
                let n = &ctx.var_names[i as usize];
                match var.param {
                    Some(Direction::Out | Direction::InOut) => format!("(*{n})"),
                    _ => n.clone(),
                }
            }
            VarRef::BlockParam(i) => format!("(*{})", ctx.block_params[i as usize]),
            VarRef::BlockLocal(i) => format!("l.{}", ctx.block_locals[i as usize]),
        }
    }

    fn field_name(&self, base_ty: &Ty, idx: u32) -> Result<String, BackError> {
        match base_ty {
            Ty::Composite(c) => match self.prog.composites[*c].fields.get(idx as usize) {
                Some(f) => Ok(field_ident(&f.name)),
                None => bad("internal: field index out of range", None),
            },
            _ => bad("internal: member of a non-composite", None),
        }
    }

    fn stack_len(&self, ty: &Ty) -> u32 {
        match ty {
            Ty::Stack(_, n) => *n,
            _ => 1,
        }
    }

    /// Whether `e` names storage (so `place` works on it).
    fn is_place(e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Var(_) => true,
            ExprKind::Member(b, _)
            | ExprKind::Index(b, _)
            | ExprKind::StackLast(b)
            | ExprKind::StackNext(b) => Self::is_place(b),
            _ => false,
        }
    }

    /// A Rust place expression (native storage) for an l-value.
    fn place(&self, ctx: &Ctx<'_>, e: &Expr) -> Result<String, BackError> {
        Ok(match &e.kind {
            ExprKind::Var(v) => self.var_place(ctx, *v),
            ExprKind::Member(b, i) => {
                format!("{}.{}", self.place(ctx, b)?, self.field_name(&b.ty, *i)?)
            }
            ExprKind::Index(b, i) => {
                let n = self.stack_len(&b.ty);
                format!(
                    "{}.elems[({} as usize).min({})]",
                    self.place(ctx, b)?,
                    self.expr(ctx, i)?,
                    n.saturating_sub(1)
                )
            }
            ExprKind::StackLast(b) => {
                let p = self.place(ctx, b)?;
                format!("{p}.elems[({p}.next as usize).saturating_sub(1)]")
            }
            ExprKind::StackNext(b) => {
                let p = self.place(ctx, b)?;
                let n = self.stack_len(&b.ty);
                format!(
                    "{p}.elems[({p}.next as usize).min({})]",
                    n.saturating_sub(1)
                )
            }
            _ => return bad("internal: not an l-value", Some(e.span)),
        })
    }

    /// The canonical value of an expression: `u128` masked to the width for
    /// bit strings, `bool`, `u32` for error/enum, the struct for composites.
    fn expr(&self, ctx: &Ctx<'_>, e: &Expr) -> Result<String, BackError> {
        let w = self.width(&e.ty);
        Ok(match &e.kind {
            ExprKind::Int(v) => lit(*v),
            ExprKind::Bool(b) => b.to_string(),
            ExprKind::ErrorCode(c) => format!("{c}u32"),
            ExprKind::EnumMember(h, i) => {
                let en = &self.prog.enums[*h];
                match &en.repr {
                    Some(_) => lit(en.members[*i as usize].1),
                    None => format!("{i}u32"),
                }
            }
            ExprKind::Member(b, i) if !Self::is_place(b) => {
                let v = format!("({}).{}", self.expr(ctx, b)?, self.field_name(&b.ty, *i)?);
                self.native_to_value(&v, &e.ty)
            }
            ExprKind::Var(_)
            | ExprKind::Member(..)
            | ExprKind::Index(..)
            | ExprKind::StackLast(_)
            | ExprKind::StackNext(_) => self.native_to_value(&self.place(ctx, e)?, &e.ty),
            ExprKind::StackLastIndex(b) => {
                format!(
                    "(({}.next as u128).wrapping_sub(1) & 0xffff_ffff)",
                    self.place(ctx, b)?
                )
            }
            ExprKind::StackNextIndex(b) => format!("({}.next as u128)", self.place(ctx, b)?),
            ExprKind::IsValid(b) => match &b.ty {
                Ty::Composite(c) if self.prog.composites[*c].kind == CompositeKind::Union => {
                    format!("{}.is_valid()", self.place(ctx, b)?)
                }
                _ => format!("{}.valid", self.place(ctx, b)?),
            },
            ExprKind::Unary(op, a) => {
                let x = self.expr(ctx, a)?;
                match op {
                    UnOp::Not => format!("(!{x})"),
                    UnOp::BitNot => format!("{BITS}::wrap(!{x}, {w})"),
                    UnOp::Neg => format!("{BITS}::wrap(0u128.wrapping_sub({x}), {w})"),
                }
            }
            ExprKind::Binary(op, a, b) => self.binary(ctx, *op, a, b, &e.ty)?,
            ExprKind::Slice(a, hi, lo) => {
                format!("{BITS}::slice({}, {hi}, {lo})", self.expr(ctx, a)?)
            }
            ExprKind::Cast(a) => self.cast(ctx, a, &e.ty)?,
            ExprKind::Mux(c, a, b) => format!(
                "(if {} {{ {} }} else {{ {} }})",
                self.expr(ctx, c)?,
                self.expr(ctx, a)?,
                self.expr(ctx, b)?
            ),
            ExprKind::List(items) => match &e.ty {
                Ty::Composite(c) => {
                    let comp = &self.prog.composites[*c];
                    let mut parts = Vec::new();
                    if comp.kind == CompositeKind::Header {
                        parts.push("valid: true".to_string());
                    }
                    for (f, it) in comp.fields.iter().zip(items) {
                        let v = self.to_native(&self.expr(ctx, it)?, &f.ty)?;
                        parts.push(format!("{}: {v}", field_ident(&f.name)));
                    }
                    format!("{} {{ {} }}", self.rust_ty(&e.ty)?, parts.join(", "))
                }
                Ty::Tuple(tys) => {
                    let mut parts = Vec::new();
                    for (t, it) in tys.iter().zip(items) {
                        parts.push(self.to_native(&self.expr(ctx, it)?, t)?);
                    }
                    format!("({},)", parts.join(", "))
                }
                _ => {
                    return bad(
                        "not supported yet: tuple values outside extern arguments",
                        Some(e.span),
                    );
                }
            },
            ExprKind::TableHit(t, hit) => {
                let call = self.table_call(ctx, *t)?;
                if *hit {
                    format!("{call}?.hit")
                } else {
                    format!("(!{call}?.hit)")
                }
            }
            ExprKind::Call(c) => self.call(ctx, c, e.span)?,
            ExprKind::Lookahead => {
                let bits = match &e.ty {
                    Ty::Composite(c) => self.prog.composites[*c].header_bits(self.prog),
                    t => self.width(t),
                };
                if let Ty::Composite(_) = &e.ty {
                    return Ok(format!(
                        "{{ let mut h__ = {}::default(); let mut c__ = PacketIn {{ data: packet__.data, off_bits: packet__.off_bits }}; if !h__.extract(&mut c__) {{ return Err(::p4_target::v1model::error_code::PACKET_TOO_SHORT); }} h__ }}",
                        self.rust_ty(&e.ty)?
                    ));
                }
                let v = format!(
                    "packet__.lookahead({bits}).ok_or(::p4_target::v1model::error_code::PACKET_TOO_SHORT)?"
                );
                if e.ty == Ty::Bool {
                    format!("({v} != 0)")
                } else {
                    v
                }
            }
        })
    }

    fn binary(
        &self,
        ctx: &Ctx<'_>,
        op: BinOp,
        a: &Expr,
        b: &Expr,
        ty: &Ty,
    ) -> Result<String, BackError> {
        let x = self.expr(ctx, a)?;
        let y = self.expr(ctx, b)?;
        let w = self.width(ty);
        let aw = self.width(&a.ty);
        let signed = a.ty.is_signed(self.prog);
        Ok(match op {
            BinOp::Add => format!("{BITS}::wrap({x}.wrapping_add({y}), {w})"),
            BinOp::Sub => format!("{BITS}::wrap({x}.wrapping_sub({y}), {w})"),
            BinOp::Mul => format!("{BITS}::wrap({x}.wrapping_mul({y}), {w})"),
            BinOp::Div => format!("{x}.checked_div({y}).unwrap_or(0)"),
            BinOp::Mod => format!("{x}.checked_rem({y}).unwrap_or(0)"),
            BinOp::SatAdd if signed => format!("{BITS}::sat_add_s({x}, {y}, {w})"),
            BinOp::SatAdd => format!("{BITS}::sat_add_u({x}, {y}, {w})"),
            BinOp::SatSub if signed => format!("{BITS}::sat_sub_s({x}, {y}, {w})"),
            BinOp::SatSub => format!("{BITS}::sat_sub_u({x}, {y})"),
            BinOp::BitAnd => format!("({x} & {y})"),
            BinOp::BitOr => format!("({x} | {y})"),
            BinOp::BitXor => format!("({x} ^ {y})"),
            BinOp::Shl => format!("{BITS}::shl({x}, {y}, {w})"),
            BinOp::Shr if signed => format!("{BITS}::shr_s({x}, {y}, {w})"),
            BinOp::Shr => format!("{BITS}::shr_u({x}, {y}, {w})"),
            BinOp::Eq => format!("({x} == {y})"),
            BinOp::Ne => format!("({x} != {y})"),
            BinOp::Lt if signed => format!("{BITS}::lt_s({x}, {y}, {aw})"),
            BinOp::Le if signed => format!("(!{BITS}::lt_s({y}, {x}, {aw}))"),
            BinOp::Gt if signed => format!("{BITS}::lt_s({y}, {x}, {aw})"),
            BinOp::Ge if signed => format!("(!{BITS}::lt_s({x}, {y}, {aw}))"),
            BinOp::Lt => format!("({x} < {y})"),
            BinOp::Le => format!("({x} <= {y})"),
            BinOp::Gt => format!("({x} > {y})"),
            BinOp::Ge => format!("({x} >= {y})"),
            BinOp::And => format!("({x} && {y})"),
            BinOp::Or => format!("({x} || {y})"),
            BinOp::Concat => format!("{BITS}::concat({x}, {y}, {})", self.width(&b.ty)),
        })
    }

    fn cast(&self, ctx: &Ctx<'_>, a: &Expr, to: &Ty) -> Result<String, BackError> {
        let x = self.expr(ctx, a)?;
        Ok(match (&a.ty, to) {
            (Ty::Bool, Ty::Bool) => x,
            (Ty::Bool, _) if self.is_bits(to) => format!("({x} as u128)"),
            (_, Ty::Bool) if self.is_bits(&a.ty) => format!("({x} != 0)"),
            (f, t) if self.is_bits(f) && self.is_bits(t) => format!(
                "{BITS}::cast({x}, {}, {}, {})",
                self.width(f),
                f.is_signed(self.prog),
                self.width(t)
            ),
            (f, t) if f == t => x,
            _ => return bad("not supported yet: this cast", Some(a.span)),
        })
    }

    /// Arguments for a callee's parameters: returns (pre-statements,
    /// argument list, post-statements) implementing copy-in/copy-out.
    fn args(
        &self,
        ctx: &Ctx<'_>,
        params: &[(Direction, Ty)],
        args: &[Expr],
    ) -> Result<CallArgs, BackError> {
        let mut pre = Vec::new();
        let mut list = Vec::new();
        let mut post = Vec::new();
        for ((dir, ty), a) in params.iter().zip(args) {
            match dir {
                Direction::In => list.push(self.to_native(&self.expr(ctx, a)?, ty)?),
                Direction::Out | Direction::InOut => {
                    let t = ctx.tmp("arg");
                    let p = self.place(ctx, a)?;
                    pre.push(format!("let mut {t} = {p};"));
                    list.push(format!("&mut {t}"));
                    post.push(format!("{p} = {t};"));
                }
            }
        }
        Ok((pre, list, post))
    }

    fn wrap_call(pre: Vec<String>, call: String, post: Vec<String>, q: &str) -> String {
        if pre.is_empty() {
            return format!("{call}{q}");
        }
        format!(
            "{{ {} let r__ = {call}; {} r__{q} }}",
            pre.join(" "),
            post.join(" ")
        )
    }

    fn table_call(&self, ctx: &Ctx<'_>, t: Handle<Table>) -> Result<String, BackError> {
        let inst = match ctx.inst {
            Some(i) => i,
            None => return bad("tables can only be applied in controls", None),
        };
        let c = &self.prog.controls[self.prog.instances[inst].control];
        let idx = match c.tables.iter().position(|x| *x == t) {
            Some(i) => i,
            None => return bad("internal: table of another control", None),
        };
        Ok(format!(
            "{}({})",
            self.names.inst_tables[inst][idx], ctx.pass
        ))
    }

    fn action_fn(&self, inst: usize, a: Handle<Action>) -> Result<&str, BackError> {
        self.names.inst_actions[inst]
            .iter()
            .find(|(h, _)| *h == a)
            .map(|(_, n)| n.as_str())
            .ok_or(BackError {
                message: "internal: action not available in this control".into(),
                span: None,
            })
    }

    /// A call as an expression (`?` applied where the callee can exit).
    fn call(&self, ctx: &Ctx<'_>, c: &Call, span: Span) -> Result<String, BackError> {
        match c {
            Call::Action(a, args) => {
                let inst = ctx.inst.ok_or(BackError {
                    message: "actions can only be called in controls".into(),
                    span: Some(span),
                })?;
                let act = &self.prog.actions[*a];
                let params: Vec<(Direction, Ty)> = act.vars[..act.n_params as usize]
                    .iter()
                    .map(|v| (v.param.unwrap_or(Direction::In), v.ty.clone()))
                    .collect();
                let (pre, list, post) = self.args(ctx, &params, args)?;
                let mut all = vec![ctx.pass.clone()];
                all.extend(list);
                let call = format!("{}({})", self.action_fn(inst, *a)?, all.join(", "));
                Ok(Self::wrap_call(pre, call, post, "?"))
            }
            Call::Function(f, args) => {
                let func = &self.prog.functions[*f];
                let params: Vec<(Direction, Ty)> = func.vars[..func.n_params as usize]
                    .iter()
                    .map(|v| (v.param.unwrap_or(Direction::In), v.ty.clone()))
                    .collect();
                let (pre, list, post) = self.args(ctx, &params, args)?;
                let call = format!("{}({})", self.names.functions[f.index()], list.join(", "));
                let call = self.native_to_value(&call, &func.ret);
                Ok(Self::wrap_call(pre, call, post, ""))
            }
            Call::TableApply(t) => Ok(format!("{}?", self.table_call(ctx, *t)?)),
            Call::ParserApply(ph, args) => {
                if ctx.kind != BodyKind::Parser {
                    return bad("internal: sub-parser outside a parser", Some(span));
                }
                let decl = &self.prog.parsers[*ph];
                let mut pre = Vec::new();
                let mut list = vec!["rt".to_string(), "env".to_string(), "packet__".to_string()];
                let mut post = Vec::new();
                let typed = decl.params.iter().filter(|p| p.ty.is_some());
                for (p, a) in typed.zip(args) {
                    let ty = p.ty.clone().unwrap_or(Ty::Void);
                    let t = ctx.tmp("parg");
                    if p.dir == Direction::In {
                        pre.push(format!(
                            "let mut {t} = {};",
                            self.to_native(&self.expr(ctx, a)?, &ty)?
                        ));
                    } else {
                        let pl = self.place(ctx, a)?;
                        pre.push(format!("let mut {t} = {pl};"));
                        post.push(format!("{pl} = {t};"));
                    }
                    list.push(format!("&mut {t}"));
                }
                let call = format!("{}({})", self.names.parsers[ph.index()], list.join(", "));
                Ok(format!(
                    "{{ {} let r__ = {call}; {} r__? }}",
                    pre.join(" "),
                    post.join(" ")
                ))
            }
            Call::ControlApply(i, args) => {
                let inst = ctx.inst.ok_or(BackError {
                    message: "internal: control apply outside a control".into(),
                    span: Some(span),
                })?;
                let sub = self.prog.instances[inst].sub[*i as usize] as usize;
                let decl = &self.prog.controls[self.prog.instances[sub].control];
                let params: Vec<(Direction, Ty)> = decl
                    .params
                    .iter()
                    .map(|p| (Direction::InOut, p.ty.clone().unwrap_or(Ty::Void)))
                    .collect();
                if decl.params.iter().any(|p| p.ty.is_none()) {
                    return bad(
                        "not supported yet: sub-controls with packet parameters",
                        Some(span),
                    );
                }
                // Every control parameter is passed as `&mut`; `in`
                // arguments are copies whose copy-out is dropped.
                let mut pre = Vec::new();
                let mut list = vec!["rt".to_string(), "env".to_string()];
                let mut post = Vec::new();
                for ((p, (_, ty)), a) in decl.params.iter().zip(&params).zip(args) {
                    let t = ctx.tmp("carg");
                    if p.dir == Direction::In {
                        pre.push(format!(
                            "let mut {t} = {};",
                            self.to_native(&self.expr(ctx, a)?, ty)?
                        ));
                    } else {
                        let pl = self.place(ctx, a)?;
                        pre.push(format!("let mut {t} = {pl};"));
                        post.push(format!("{pl} = {t};"));
                    }
                    list.push(format!("&mut {t}"));
                }
                let call = format!("{}({})", self.names.inst_apply[sub], list.join(", "));
                Ok(format!(
                    "{{ {} let r__ = {call}; {} r__? }}",
                    pre.join(" "),
                    post.join(" ")
                ))
            }
            Call::Builtin(b) => self.builtin(ctx, b, span),
        }
    }

    fn pack(
        &self,
        ctx: &Ctx<'_>,
        data: &[Expr],
        out: &mut Vec<String>,
    ) -> Result<String, BackError> {
        let bp = ctx.tmp("bp");
        out.push(format!(
            "let mut {bp} = ::p4_target::externs::BitPacker::new();"
        ));
        let mut total = 0u32;
        let mut flat = Vec::new();
        self.flatten(data, &mut flat);
        for d in flat {
            if let Ty::Varbit(max) = &d.ty {
                total += max;
                out.push(format!("{bp}.push_bytes({}.used());", self.place(ctx, &d)?));
                continue;
            }
            let w = match &d.ty {
                Ty::Bool => 1,
                Ty::Error | Ty::Enum(_) => 32,
                t if self.is_bits(t) => self.width(t),
                _ => return bad("not supported yet: this field list member", Some(d.span)),
            };
            total += w;
            let v = self.expr(ctx, &d)?;
            let v = if self.is_bits(&d.ty) || d.ty == Ty::Bool {
                v
            } else {
                format!("({v} as u128)")
            };
            let v = if d.ty == Ty::Bool {
                format!("({v} as u128)")
            } else {
                v
            };
            out.push(format!("{bp}.push({v}, {w});"));
        }
        if total > 256 * 8 {
            return bad(
                "field list longer than 256 bytes",
                data.first().map(|d| d.span),
            );
        }
        Ok(bp)
    }

    /// Flattens lists and structs/headers into scalar members, in order.
    fn flatten(&self, data: &[Expr], out: &mut Vec<Expr>) {
        for d in data {
            match (&d.kind, &d.ty) {
                (ExprKind::List(items), _) => self.flatten(items, out),
                (_, Ty::Composite(c)) => {
                    let comp = &self.prog.composites[*c];
                    let members: Vec<Expr> = comp
                        .fields
                        .iter()
                        .enumerate()
                        .map(|(i, f)| Expr {
                            kind: ExprKind::Member(Box::new(d.clone()), i as u32),
                            ty: f.ty.clone(),
                            span: d.span,
                        })
                        .collect();
                    self.flatten(&members, out);
                }
                _ => out.push(d.clone()),
            }
        }
    }

    fn assign_native(
        &self,
        ctx: &Ctx<'_>,
        lhs: &Expr,
        value_u128: &str,
    ) -> Result<String, BackError> {
        let p = self.place(ctx, lhs)?;
        Ok(format!("{p} = {};", self.to_native(value_u128, &lhs.ty)?))
    }

    fn builtin(&self, ctx: &Ctx<'_>, b: &Builtin, span: Span) -> Result<String, BackError> {
        Ok(format!(
            "{{ {} }}",
            self.builtin_lines(ctx, b, span)?.join(" ")
        ))
    }

    /// The statements of a built-in call, one per line (`if .. {` and `}`
    /// lines open and close blocks).
    fn builtin_lines(
        &self,
        ctx: &Ctx<'_>,
        b: &Builtin,
        span: Span,
    ) -> Result<Vec<String>, BackError> {
        let extern_index = |inst: u32| -> Result<u32, BackError> {
            let i = ctx.inst.ok_or(BackError {
                message: "extern objects are only supported in controls".into(),
                span: Some(span),
            })?;
            Ok(self.prog.instances[i].extern_index[inst as usize])
        };
        let mut s = Vec::new();
        match b {
            Builtin::MarkToDrop(e) => s.push(format!("{}.mark_to_drop();", self.place(ctx, e)?)),
            Builtin::Hash {
                out,
                algo,
                base,
                data,
                max,
            } => {
                if ctx.kind == BodyKind::Function {
                    return bad("not supported yet: hash inside functions", Some(span));
                }
                let bp = self.pack(ctx, data, &mut s)?;
                let v = format!(
                    "{BITS}::wrap(::p4_target::externs::hash_range(rt.hash({}, &{bp}), {}, {}), {})",
                    info::algo(*algo),
                    self.expr(ctx, base)?,
                    self.expr(ctx, max)?,
                    self.width(&out.ty)
                );
                s.push(self.assign_native(ctx, out, &v)?);
            }
            Builtin::Random { out, lo, hi } => {
                if ctx.kind == BodyKind::Function {
                    return bad("not supported yet: random inside functions", Some(span));
                }
                let v = format!(
                    "rt.random({}, {})",
                    self.expr(ctx, lo)?,
                    self.expr(ctx, hi)?
                );
                s.push(self.assign_native(ctx, out, &v)?);
            }
            Builtin::VerifyChecksum {
                cond,
                data,
                checksum,
                algo,
                with_payload,
            } => {
                s.push(format!("if {} {{", self.expr(ctx, cond)?));
                let w = self.width(&checksum.ty);
                let computed =
                    self.checksum_of(ctx, *algo, *with_payload, data, w, span, &mut s)?;
                s.push(format!(
                    "if {computed} != {} {{ env.checksum_error = true; }}",
                    self.expr(ctx, checksum)?
                ));
                s.push("}".into());
            }
            Builtin::UpdateChecksum {
                cond,
                data,
                checksum,
                algo,
                with_payload,
            } => {
                s.push(format!("if {} {{", self.expr(ctx, cond)?));
                let w = self.width(&checksum.ty);
                let v = self.checksum_of(ctx, *algo, *with_payload, data, w, span, &mut s)?;
                s.push(self.assign_native(ctx, checksum, &v)?);
                s.push("}".into());
            }
            Builtin::Clone {
                kind,
                session,
                field_list,
            } => {
                let fl = match field_list {
                    Some(n) => format!("Some({n})"),
                    None => "None".into(),
                };
                s.push(format!(
                    "env.clone_request = Some(::p4_target::v1model::CloneRequest {{ kind: if {} == 0 {{ ::p4_target::v1model::CloneType::IngressToEgress }} else {{ ::p4_target::v1model::CloneType::EgressToEgress }}, session: {} as u32, field_list: {fl} }});",
                    self.expr(ctx, kind)?,
                    self.expr(ctx, session)?
                ));
            }
            Builtin::Resubmit(n) => s.push(format!("env.resubmit = Some({n});")),
            Builtin::Recirculate(n) => s.push(format!("env.recirculate = Some({n});")),
            Builtin::Digest { digest, data } => {
                let id = self
                    .names
                    .objects
                    .digests
                    .id
                    .get(*digest as usize)
                    .map_or_else(|| "0".to_string(), |n| format!("digests::{n}"));
                let mut flat = Vec::new();
                self.flatten(data, &mut flat);
                let vals: Result<Vec<String>, BackError> = flat
                    .iter()
                    .map(|d| {
                        let v = self.expr(ctx, d)?;
                        Ok(if self.is_bits(&d.ty) {
                            v
                        } else {
                            format!("({v} as u128)")
                        })
                    })
                    .collect();
                s.push(format!(
                    "rt.digests.push(({id}, vec![{}]));",
                    vals?.join(", ")
                ));
            }
            Builtin::Truncate(e) => s.push(format!(
                "env.truncate_len = Some({} as u32);",
                self.expr(ctx, e)?
            )),
            Builtin::Assert(c) => {
                if ctx.kind == BodyKind::Parser || ctx.kind == BodyKind::Function {
                    return bad(
                        "not supported yet: assert/assume outside controls",
                        Some(span),
                    );
                }
                s.push(format!(
                    "if !{} {{ env.drop = true; return Err(Exit); }}",
                    self.expr(ctx, c)?
                ));
            }
            Builtin::LogMsg | Builtin::DirectCount => {}
            Builtin::DirectMeterRead { inst, out } => {
                let i = ctx.inst.ok_or(BackError {
                    message: "internal: direct meter outside a control".into(),
                    span: Some(span),
                })?;
                let ci = &self.prog.instances[i];
                let c = &self.prog.controls[ci.control];
                let Some(ti) = c
                    .tables
                    .iter()
                    .position(|t| self.prog.tables[*t].direct_meter == Some(*inst))
                else {
                    return bad(
                        "this direct_meter is not attached to a table with `meters =`",
                        Some(span),
                    );
                };
                let v = format!(
                    "(match env.entry {{ Some(e) => rt.tables[{}].direct_meter_execute(e, env.now_ns, env.packet_length), None => 0 }} as u128)",
                    self.names.objects.table(ci.table_index[ti] as usize)
                );
                s.push(self.assign_native(ctx, out, &v)?);
            }
            Builtin::Extract(h, Some(len)) => {
                s.push(format!(
                    "{}.extract_var(packet__, u32::try_from({}).unwrap_or(u32::MAX))?;",
                    self.place(ctx, h)?,
                    self.expr(ctx, len)?
                ));
            }
            Builtin::Extract(h, None) => {
                const E: &str = "::p4_target::v1model::error_code";
                match &h.kind {
                    ExprKind::StackNext(st) => {
                        let p = self.place(ctx, st)?;
                        let n = self.stack_len(&st.ty);
                        s.push(format!(
                            "if {p}.next as usize >= {n} {{ return Err({E}::STACK_OUT_OF_BOUNDS); }}"
                        ));
                        s.push(format!(
                            "if !{p}.elems[{p}.next as usize].extract(packet__) {{ return Err({E}::PACKET_TOO_SHORT); }}"
                        ));
                        s.push(format!("{p}.next += 1;"));
                    }
                    _ => s.push(format!(
                        "if !{}.extract(packet__) {{ return Err({E}::PACKET_TOO_SHORT); }}",
                        self.place(ctx, h)?
                    )),
                }
            }
            Builtin::Advance(e) => {
                s.push(format!("let adv__ = {} as usize;", self.expr(ctx, e)?));
                s.push("if packet__.data.len() * 8 < packet__.off_bits + adv__ { return Err(::p4_target::v1model::error_code::PACKET_TOO_SHORT); }".into());
                s.push("packet__.off_bits += adv__;".into());
            }
            Builtin::Emit(e) => self.emit_stmt(ctx, e, &mut s)?,
            Builtin::Verify(c, err) => s.push(format!(
                "if !{} {{ return Err({}); }}",
                self.expr(ctx, c)?,
                self.expr(ctx, err)?
            )),
            Builtin::SetValid(h) | Builtin::SetInvalid(h) => {
                let valid = matches!(b, Builtin::SetValid(_));
                if let ExprKind::Member(base, _) = &h.kind
                    && let Ty::Composite(c) = &base.ty
                    && self.prog.composites[*c].kind == CompositeKind::Union
                {
                    s.push(format!("{}.invalidate();", self.place(ctx, base)?));
                }
                s.push(format!("{}.valid = {valid};", self.place(ctx, h)?));
            }
            Builtin::PushFront(st, n) => {
                let p = self.place(ctx, st)?;
                let len = self.stack_len(&st.ty);
                s.push(format!(
                    "{{ let n__ = ({n} as usize).min({len}); {p}.elems.copy_within(0..{len} - n__, n__); for e__ in {p}.elems[..n__].iter_mut() {{ *e__ = Default::default(); }} {p}.next = ({p}.next + n__ as u32).min({len}); }}"
                ));
            }
            Builtin::PopFront(st, n) => {
                let p = self.place(ctx, st)?;
                let len = self.stack_len(&st.ty);
                s.push(format!(
                    "{{ let n__ = ({n} as usize).min({len}); {p}.elems.copy_within(n__..{len}, 0); for e__ in {p}.elems[{len} - n__..].iter_mut() {{ *e__ = Default::default(); }} {p}.next = {p}.next.saturating_sub(n__ as u32); }}"
                ));
            }
            Builtin::RegisterRead { inst, out, index } => {
                let k = self.names.objects.register(extern_index(*inst)? as usize);
                let v = format!(
                    "rt.registers[{k}].read(u32::try_from({}).unwrap_or(u32::MAX))",
                    self.expr(ctx, index)?
                );
                s.push(self.assign_native(ctx, out, &v)?);
            }
            Builtin::RegisterWrite { inst, index, value } => {
                let k = self.names.objects.register(extern_index(*inst)? as usize);
                s.push(format!(
                    "rt.registers[{k}].write(u32::try_from({}).unwrap_or(u32::MAX), {});",
                    self.expr(ctx, index)?,
                    self.expr(ctx, value)?
                ));
            }
            Builtin::CounterCount { inst, index } => {
                let k = self.names.objects.counter(extern_index(*inst)? as usize);
                s.push(format!(
                    "rt.counters[{k}].count(u32::try_from({}).unwrap_or(u32::MAX), env.packet_length);",
                    self.expr(ctx, index)?
                ));
            }
            Builtin::MeterExecute { inst, index, out } => {
                let k = self.names.objects.meter(extern_index(*inst)? as usize);
                let v = format!(
                    "(rt.meters[{k}].execute(u32::try_from({}).unwrap_or(u32::MAX), env.now_ns, env.packet_length) as u128)",
                    self.expr(ctx, index)?
                );
                s.push(self.assign_native(ctx, out, &v)?);
            }
        }
        Ok(s)
    }

    /// The `width`-bit checksum of field list `data` (verify/update_checksum):
    /// computed straight from the field values when [`Self::csum16_direct`]
    /// can, else by packing the fields (statements pushed to `s`).
    #[allow(clippy::too_many_arguments)]
    fn checksum_of(
        &self,
        ctx: &Ctx<'_>,
        algo: p4_target::info::HashAlgorithm,
        with_payload: bool,
        data: &[Expr],
        width: u32,
        span: Span,
        s: &mut Vec<String>,
    ) -> Result<String, BackError> {
        if let Some(v) = self.csum16_direct(ctx, algo, with_payload, data, width)? {
            return Ok(v);
        }
        let bp = self.pack(ctx, data, s)?;
        self.checksum_value(algo, &bp, width, with_payload, span)
    }

    /// `csum16` of a field list of fixed-width scalars computed straight
    /// from the field values (see `p4_target::externs::csum16_finish`),
    /// without packing them into bytes; `None` when the list has varbits or
    /// other members, or another algorithm is asked for.
    fn csum16_direct(
        &self,
        ctx: &Ctx<'_>,
        algo: p4_target::info::HashAlgorithm,
        with_payload: bool,
        data: &[Expr],
        width: u32,
    ) -> Result<Option<String>, BackError> {
        if algo != p4_target::info::HashAlgorithm::Csum16 || with_payload {
            return Ok(None);
        }
        let mut flat = Vec::new();
        self.flatten(data, &mut flat);
        // A varbit is allowed as the last member (IPv4 options): its length is
        // only known at run time, so the field weights are computed then.
        let varbit = match flat.last() {
            Some(d) if matches!(d.ty, Ty::Varbit(_)) => {
                let d = flat.pop().expect("last exists");
                Some(self.place(ctx, &d)?)
            }
            _ => None,
        };
        let mut fields = Vec::new();
        for d in &flat {
            let w = match &d.ty {
                Ty::Bool => 1,
                t if self.is_bits(t) => self.width(t),
                _ => return Ok(None),
            };
            if w == 0 || w > 128 {
                return Ok(None);
            }
            let v = self.expr(ctx, d)?;
            let v = if d.ty == Ty::Bool {
                format!("({v} as u128)")
            } else {
                format!("({v})")
            };
            fields.push((v, w));
        }
        let total: u32 = fields.iter().map(|f| f.1).sum();
        if varbit.is_some() && !total.is_multiple_of(8) {
            return Ok(None);
        }
        // Bits after a field's end, mod 16: a constant without a varbit, else
        // computed from the padded total at run time.
        let padded = total.div_ceil(16) * 16;
        let shift = |end: u32, extra: u32| match varbit {
            None => format!("{}", (padded - end + extra) % 16),
            Some(_) => format!("((pad__ - {end} + {extra}) % 16)"),
        };
        let mut end = 0;
        let mut terms = Vec::new();
        for (v, w) in fields {
            end += w;
            if w > 64 {
                // Split so no term can overflow 128 bits once shifted.
                terms.push(format!(
                    "((({v} >> 64) & {}) << {})",
                    mask_literal(w - 64),
                    shift(end, 64)
                ));
                terms.push(format!(
                    "(({v} & 0xffff_ffff_ffff_ffff) << {})",
                    shift(end, 0)
                ));
            } else {
                terms.push(format!(
                    "(({v} & {}) << {})",
                    mask_literal(w),
                    shift(end, 0)
                ));
            }
        }
        let Some(vb) = varbit else {
            if terms.is_empty() {
                return Ok(None);
            }
            return Ok(Some(format!(
                "{BITS}::wrap(::p4_target::externs::csum16_finish({}), {width})",
                terms.join(" + ")
            )));
        };
        terms.push("::p4_target::externs::csum16_weighted_bytes(vb__, pad__ - total__)".into());
        Ok(Some(format!(
            "({{ let vb__ = {vb}.used(); let total__ = {total} + 8 * vb__.len() as u32; \
             let pad__ = total__.div_ceil(16) * 16; \
             {BITS}::wrap(::p4_target::externs::csum16_finish({}), {width}) }})",
            terms.join(" + ")
        )))
    }

    /// The checksum of packer `bp` (and the payload) as a `width`-bit value.
    fn checksum_value(
        &self,
        algo: p4_target::info::HashAlgorithm,
        bp: &str,
        width: u32,
        with_payload: bool,
        span: Span,
    ) -> Result<String, BackError> {
        if !with_payload {
            return Ok(format!(
                "::p4_target::externs::update_checksum({}, &{bp}, {width})",
                info::algo(algo)
            ));
        }
        if algo != p4_target::info::HashAlgorithm::Csum16 {
            return bad(
                "not supported yet: checksums with payload other than csum16",
                Some(span),
            );
        }
        Ok(format!(
            "{BITS}::wrap(csum16_with_payload({bp}.bytes(), &env.data[env.payload_offset.min(env.data.len())..]), {width})"
        ))
    }

    fn emit_stmt(&self, ctx: &Ctx<'_>, e: &Expr, s: &mut Vec<String>) -> Result<(), BackError> {
        match &e.ty {
            Ty::Composite(c) => {
                let comp = &self.prog.composites[*c];
                match comp.kind {
                    CompositeKind::Header | CompositeKind::Union => {
                        s.push(format!("{}.emit(packet__);", self.place(ctx, e)?))
                    }
                    CompositeKind::Struct => {
                        for (i, f) in comp.fields.iter().enumerate() {
                            let m = Expr {
                                kind: ExprKind::Member(Box::new(e.clone()), i as u32),
                                ty: f.ty.clone(),
                                span: e.span,
                            };
                            self.emit_stmt(ctx, &m, s)?;
                        }
                    }
                }
            }
            Ty::Stack(..) => s.push(format!(
                "for e__ in {}.elems.iter() {{ e__.emit(packet__); }}",
                self.place(ctx, e)?
            )),
            _ => return bad("emit needs a header, union, stack or struct", Some(e.span)),
        }
        Ok(())
    }

    // ---------------------------------------------------------- statements

    fn block(&mut self, ctx: &Ctx<'_>, b: &Block) -> Result<(), BackError> {
        for s in b {
            self.stmt(ctx, s)?;
        }
        Ok(())
    }

    fn ret_unit(ctx: &Ctx<'_>) -> &'static str {
        match ctx.kind {
            BodyKind::Control | BodyKind::Parser => "return Ok(());",
            BodyKind::Function => "return;",
        }
    }

    fn stmt(&mut self, ctx: &Ctx<'_>, s: &Stmt) -> Result<(), BackError> {
        match s {
            Stmt::Assign(lhs, rhs, _) => {
                let v = self.expr(ctx, rhs)?;
                let line = self.assign_native(ctx, lhs, &v)?;
                self.w.line(line);
            }
            Stmt::Decl(i, init) => {
                let var = &ctx.vars[*i as usize];
                let n = &ctx.var_names[*i as usize];
                let v = match init {
                    Some(e) => self.to_native(&self.expr(ctx, e)?, &var.ty)?,
                    None => self.default_value(&var.ty)?,
                };
                if ctx.kind == BodyKind::Parser {
                    self.w.line(format!("{n} = {v};"));
                } else {
                    let t = self.rust_ty(&var.ty)?;
                    self.w.line(format!("let mut {n}: {t} = {v};"));
                }
            }
            Stmt::If(c, t, e) => {
                let c = self.expr(ctx, c)?;
                self.w.open(format!("if {c} {{"));
                self.block(ctx, t)?;
                if let Some(e) = e {
                    self.w.reopen("} else {");
                    self.block(ctx, e)?;
                }
                self.w.close("}");
            }
            Stmt::Block(b) => {
                self.w.open("{");
                self.block(ctx, b)?;
                self.w.close("}");
            }
            Stmt::Switch(e, cases) => {
                let v = self.expr(ctx, e)?;
                self.w.open(format!("match {v} {{"));
                let mut pending: Vec<String> = Vec::new();
                let mut has_default = false;
                for c in cases {
                    if c.is_default {
                        has_default = true;
                        pending.clear();
                        pending.push("_".into());
                    } else {
                        for l in &c.labels {
                            pending.push(self.pattern(l)?);
                        }
                    }
                    if let Some(body) = &c.body {
                        self.w.open(format!("{} => {{", pending.join(" | ")));
                        self.block(ctx, body)?;
                        self.w.close("}");
                        pending.clear();
                    }
                }
                if !has_default {
                    self.w.line("_ => {}");
                }
                self.w.close("}");
            }
            Stmt::SwitchAction(t, cases) => {
                let call = self.table_call(ctx, *t)?;
                self.w.open(format!("match {call}?.action_run {{"));
                let mut pending: Vec<String> = Vec::new();
                let mut has_default = false;
                for c in cases {
                    if c.is_default {
                        has_default = true;
                        pending.clear();
                        pending.push("_".into());
                    } else {
                        for a in &c.actions {
                            pending.push(format!("{:#x}", self.prog.action_ids[a.index()]));
                        }
                    }
                    if let Some(body) = &c.body {
                        self.w.open(format!("{} => {{", pending.join(" | ")));
                        self.block(ctx, body)?;
                        self.w.close("}");
                        pending.clear();
                    }
                }
                if !has_default {
                    self.w.line("_ => {}");
                }
                self.w.close("}");
            }
            Stmt::Call(Call::Builtin(b), span) => {
                let lines = self.builtin_lines(ctx, b, *span)?;
                // Temporaries get their own block so names never clash.
                let scoped = lines.len() > 1 && lines.iter().any(|l| l.starts_with("let "));
                if scoped {
                    self.w.open("{");
                }
                for l in lines {
                    if l == "}" {
                        self.w.close("}");
                    } else if l.ends_with('{') {
                        self.w.open(l);
                    } else {
                        self.w.line(l);
                    }
                }
                if scoped {
                    self.w.close("}");
                }
            }
            Stmt::Call(c, span) => {
                let e = self.call(ctx, c, *span)?;
                self.w.line(format!("{e};"));
            }
            Stmt::Exit => match ctx.kind {
                BodyKind::Control => self.w.line("return Err(Exit);"),
                _ => return bad("`exit` is only supported in controls", None),
            },
            Stmt::Return(None) => self.w.line(Self::ret_unit(ctx)),
            Stmt::Return(Some(e)) => {
                let v = self.to_native(&self.expr(ctx, e)?, &e.ty)?;
                self.w.line(format!("return {v};"));
            }
            Stmt::Break => {
                let n = self.loops.last().copied().unwrap_or(0);
                self.w.line(format!("break 'loop{n};"));
            }
            Stmt::Continue => {
                let n = self.loops.last().copied().unwrap_or(0);
                self.w.line(format!("break 'pass{n};"));
            }
            Stmt::For { cond, update, body } => {
                let n = self.open_loop("loop");
                if let Some(c) = cond {
                    let c = self.expr(ctx, c)?;
                    self.w.line(format!("if !{c} {{ break; }}"));
                }
                self.loop_pass(ctx, n, body)?;
                self.block(ctx, update)?;
                self.close_loop();
            }
            Stmt::ForRange { var, lo, hi, body } => {
                let (w, signed) = (self.width(&lo.ty), lo.ty.is_signed(self.prog));
                self.w.open("{");
                self.w
                    .line(format!("let lo__: u128 = {};", self.expr(ctx, lo)?));
                self.w
                    .line(format!("let hi__: u128 = {};", self.expr(ctx, hi)?));
                let empty = if signed {
                    format!("{BITS}::lt_s(hi__, lo__, {w})")
                } else {
                    "hi__ < lo__".to_string()
                };
                self.w.line("let mut it__ = lo__;");
                self.w.open(format!("if !({empty}) {{"));
                let n = self.open_loop("loop");
                let v = self.to_native("it__", &lo.ty)?;
                self.w.line(format!(
                    "{} = {v};",
                    self.var_place(ctx, VarRef::Local(*var))
                ));
                self.loop_pass(ctx, n, body)?;
                self.w.line("if it__ == hi__ { break; }");
                self.w
                    .line(format!("it__ = {BITS}::wrap(it__.wrapping_add(1), {w});"));
                self.close_loop();
                self.w.close("}");
                self.w.close("}");
            }
            Stmt::ForStack { var, stack, body } => {
                let n = self.stack_len(&stack.ty);
                let place = self.place(ctx, stack)?;
                let label = self.open_loop(&format!("for i__ in 0..{n}"));
                self.w.line(format!(
                    "{} = {place}.elems[i__];",
                    self.var_place(ctx, VarRef::Local(*var))
                ));
                self.loop_pass(ctx, label, body)?;
                self.close_loop();
            }
        }
        Ok(())
    }

    /// Opens loop `head` (`loop`, `for .. in ..`) labelled `'loopN`;
    /// returns N. `break` leaves `'loopN`.
    fn open_loop(&mut self, head: &str) -> u32 {
        let n = self.next_loop;
        self.next_loop += 1;
        self.loops.push(n);
        self.w.open(format!("'loop{n}: {head} {{"));
        n
    }

    fn close_loop(&mut self) {
        self.loops.pop();
        self.w.close("}");
    }

    /// One pass of a loop body in a block labelled `'passN`, which
    /// `continue` leaves.
    fn loop_pass(&mut self, ctx: &Ctx<'_>, n: u32, body: &Block) -> Result<(), BackError> {
        self.w.open(format!("'pass{n}: {{"));
        self.block(ctx, body)?;
        self.w.close("}");
        Ok(())
    }

    fn pattern(&self, e: &Expr) -> Result<String, BackError> {
        Ok(match &e.kind {
            ExprKind::Int(v) => lit(*v),
            ExprKind::ErrorCode(c) => format!("{c}u32"),
            ExprKind::Bool(b) => b.to_string(),
            ExprKind::EnumMember(h, i) => match &self.prog.enums[*h].repr {
                Some(_) => lit(self.prog.enums[*h].members[*i as usize].1),
                None => format!("{i}u32"),
            },
            _ => return bad("switch labels must be constants", Some(e.span)),
        })
    }

    // ------------------------------------------------------------ functions

    /// A namer for a body's locals and parameters: it avoids `reserved` and
    /// the program constants, which a Rust binding of the same name would
    /// match as a pattern instead of shadowing.
    fn local_namer(&self, reserved: &[&str]) -> Namer {
        let mut all: Vec<&str> = reserved.to_vec();
        all.extend(self.names.constants.iter().map(String::as_str));
        Namer::with_reserved(&all)
    }

    fn var_names(&self, vars: &[Var], reserved: &[&str]) -> Vec<String> {
        let mut n = self.local_namer(reserved);
        vars.iter().map(|v| n.fresh(&v.name)).collect()
    }

    /// `value_sets::NAME` of parser value set `vs`.
    fn value_set_path(&self, vs: u32) -> String {
        let index = self
            .prog
            .value_set_index
            .get(vs as usize)
            .copied()
            .unwrap_or(vs);
        format!(
            "value_sets::{}",
            self.names.objects.value_sets.index[index as usize]
        )
    }

    fn function(&mut self, h: Handle<Function>) -> Result<(), BackError> {
        let f = &self.prog.functions[h];
        let names = self.var_names(&f.vars, &["rt", "env", "l"]);
        let ctx = Ctx {
            kind: BodyKind::Function,
            vars: &f.vars,
            var_names: names.clone(),
            block_params: vec![],
            block_locals: vec![],
            inst: None,
            pass: String::new(),
            tmp: Default::default(),
        };
        let mut params = Vec::new();
        for (v, n) in f.vars[..f.n_params as usize].iter().zip(&names) {
            let t = self.rust_ty(&v.ty)?;
            params.push(match v.param {
                Some(Direction::Out | Direction::InOut) => format!("{n}: &mut {t}"),
                _ => format!("mut {n}: {t}"),
            });
        }
        let ret = match &f.ret {
            Ty::Void => String::new(),
            t => format!(" -> {}", self.rust_ty(t)?),
        };
        self.w.line(format!("/// P4 function `{}`.", f.name));
        self.w.line(ALLOW);
        self.w.open(format!(
            "fn {}({}){ret} {{",
            self.names.functions[h.index()],
            params.join(", ")
        ));
        self.block(&ctx, &f.body)?;
        self.w.close("}");
        self.w.line("");
        Ok(())
    }

    fn locals_struct(&mut self, h: Handle<Control>) -> Result<(), BackError> {
        let c = &self.prog.controls[h];
        let name = self.names.locals_structs[h.index()].clone();
        let names = self.var_names(&c.locals, &[]);
        self.w
            .line(format!("/// Control-level variables of `{}`.", c.name));
        self.w.line(ALLOW);
        self.w.line("#[derive(Clone, Copy, Debug, Default)]");
        self.w.open(format!("pub struct {name} {{"));
        for (v, n) in c.locals.iter().zip(&names) {
            let t = self.rust_ty(&v.ty)?;
            self.w.line(format!("pub {n}: {t},"));
        }
        self.w.close("}");
        self.w.line("");
        Ok(())
    }

    /// Parameter list of every function of a control instance, and the
    /// argument list that passes them on.
    fn block_sig(&self, c: &Control, names: &[String]) -> Result<(String, String), BackError> {
        let mut sig = vec![
            "rt: &mut ::p4_target::runtime::Runtime".to_string(),
            "env: &mut Env<'_>".to_string(),
        ];
        let mut pass = vec!["rt".to_string(), "env".to_string()];
        for (p, n) in c.params.iter().zip(names) {
            match &p.ty {
                Some(t) => sig.push(format!("{n}: &mut {}", self.rust_ty(t)?)),
                None => sig.push(format!("{n}: &mut Vec<u8>")),
            }
            pass.push(n.clone());
        }
        Ok((sig.join(", "), pass.join(", ")))
    }

    fn instance(&mut self, i: usize) -> Result<(), BackError> {
        let inst = self.prog.instances[i].clone();
        let c = &self.prog.controls[inst.control];
        let mut pn = self.local_namer(&["rt", "env", "l"]);
        let mut param_names: Vec<String> = Vec::new();
        for p in &c.params {
            if p.ty.is_none() {
                // packet_out: the emit code uses this fixed name.
                param_names.push("packet__".into());
            } else {
                param_names.push(pn.fresh(&p.name));
            }
        }
        let local_names = self.var_names(&c.locals, &[]);
        let (sig, pass) = self.block_sig(c, &param_names)?;
        let locals_ty = self.names.locals_structs[inst.control.index()].clone();
        let pass_l = format!("{pass}, l");
        let sig_l = format!("{sig}, l: &mut {locals_ty}");

        // Actions.
        for (a, fname) in self.names.inst_actions[i].clone() {
            let act = &self.prog.actions[a];
            let reserved: Vec<&str> = ["rt", "env", "l"]
                .into_iter()
                .chain(param_names.iter().map(|s| s.as_str()))
                .collect();
            let names = self.var_names(&act.vars, &reserved);
            let mut params = vec![sig_l.clone()];
            for (v, n) in act.vars[..act.n_params as usize].iter().zip(&names) {
                let t = self.rust_ty(&v.ty)?;
                params.push(match v.param {
                    Some(Direction::Out | Direction::InOut) => format!("{n}: &mut {t}"),
                    _ => format!("mut {n}: {t}"),
                });
            }
            let ctx = Ctx {
                kind: BodyKind::Control,
                vars: &act.vars,
                var_names: names,
                block_params: param_names.clone(),
                block_locals: local_names.clone(),
                inst: Some(i),
                pass: pass_l.clone(),
                tmp: Default::default(),
            };
            self.w
                .line(format!("/// Action `{}` of `{}`.", act.p4_name, inst.path));
            self.w.line(ALLOW);
            self.w.open(format!(
                "fn {fname}({}) -> Result<(), Exit> {{",
                params.join(", ")
            ));
            self.block(&ctx, &act.body)?;
            self.w.line("Ok(())");
            self.w.close("}");
            self.w.line("");
        }

        // Tables.
        for (ti, t) in c.tables.iter().enumerate() {
            let table = &self.prog.tables[*t];
            let fname = self.names.inst_tables[i][ti].clone();
            let rt_index = self.names.objects.table(inst.table_index[ti] as usize);
            let ctx = Ctx {
                kind: BodyKind::Control,
                vars: &[],
                var_names: vec![],
                block_params: param_names.clone(),
                block_locals: local_names.clone(),
                inst: Some(i),
                pass: pass_l.clone(),
                tmp: Default::default(),
            };
            let max_params = table
                .actions
                .iter()
                .map(|a| self.prog.actions[*a].data_params().len())
                .max()
                .unwrap_or(0);
            self.w
                .line(format!("/// Table `{}.{}`.", inst.path, table.name));
            self.w.line(ALLOW);
            self.w.open(format!(
                "fn {fname}({sig_l}) -> Result<ApplyResult, Exit> {{"
            ));
            let mut keys = Vec::new();
            let mut sel = Vec::new();
            for k in &table.keys {
                let v = self.expr(&ctx, &k.expr)?;
                let v = if self.is_bits(&k.expr.ty) {
                    v
                } else {
                    // bool, error, enum
                    format!("({v} as u128)")
                };
                match k.kind {
                    KeyKind::Match(_) => keys.push(v),
                    KeyKind::Selector => sel.push(k.expr.clone()),
                }
            }
            self.w.line(format!(
                "let key__: [u128; {}] = [{}];",
                keys.len(),
                keys.join(", ")
            ));
            let profile = table.implementation.map(|e| {
                (
                    self.names
                        .objects
                        .profile(inst.extern_index[e as usize] as usize),
                    c.externs[e as usize].kind.clone(),
                )
            });
            let mut hash_line = None;
            if let Some((_, ExternKind::ActionSelector(algo, _, _))) = &profile {
                let mut pre = Vec::new();
                let bp = self.pack(&ctx, &sel, &mut pre)?;
                for p in pre {
                    self.w.line(p);
                }
                hash_line = Some(format!(
                    "let sel_hash__ = rt.hash({}, &{bp});",
                    info::algo(*algo)
                ));
            }
            if let Some(h) = hash_line {
                self.w.line(h);
            }
            self.w.line(format!("let mut p__ = [0u128; {max_params}];"));
            self.w.open("let (hit__, aid__, entry__) = {");
            self.w.line(format!(
                "let r__ = rt.tables[{rt_index}].lookup(&key__, env.packet_length);"
            ));
            self.w
                .open("let call__: Option<&::p4_target::runtime::ActionCall> = match r__.action {");
            self.w
                .line("::p4_target::runtime::EntryAction::Direct(c__) => Some(c__),");
            match &profile {
                Some((pi, ExternKind::ActionSelector(..))) => {
                    self.w.line(format!(
                        "::p4_target::runtime::EntryAction::Member(m__) => rt.profiles[{pi}].member(*m__),"
                    ));
                    self.w.line(format!(
                        "::p4_target::runtime::EntryAction::Group(g__) => rt.profiles[{pi}].select(*g__, sel_hash__),"
                    ));
                }
                Some((pi, _)) => {
                    self.w.line(format!(
                        "::p4_target::runtime::EntryAction::Member(m__) => rt.profiles[{pi}].member(*m__),"
                    ));
                    self.w
                        .line("::p4_target::runtime::EntryAction::Group(_) => None,");
                }
                None => self.w.line("_ => None,"),
            }
            self.w.close("};");
            self.w.open("match call__ {");
            self.w.open("Some(c__) => {");
            self.w.line("let n__ = c__.params.len().min(p__.len());");
            self.w
                .line("p__[..n__].copy_from_slice(&c__.params[..n__]);");
            self.w.line("(r__.hit, c__.action_id, r__.entry)");
            self.w.close("}");
            self.w.line("None => (r__.hit, 0, r__.entry),");
            self.w.close("}");
            self.w.close("};");
            if table.direct_meter.is_some() {
                self.w.line("env.entry = entry__;");
            }
            self.w.open("match aid__ {");
            for (ai, a) in table.actions.iter().enumerate() {
                let act = &self.prog.actions[*a];
                // Directional parameters take the arguments bound in the
                // actions list, copied in and out.
                let params: Vec<(Direction, Ty)> = act.vars[..act.n_directional as usize]
                    .iter()
                    .map(|v| (v.param.unwrap_or(Direction::In), v.ty.clone()))
                    .collect();
                let no_bound = Vec::new();
                let bound = table.bound.get(ai).unwrap_or(&no_bound);
                let (pre, list, post) = self.args(&ctx, &params, bound)?;
                let mut args = vec![pass_l.clone()];
                args.extend(list);
                for (j, v) in act.data_params().iter().enumerate() {
                    args.push(match &v.ty {
                        Ty::Bool => format!("p__[{j}] != 0"),
                        t => self.to_native(&format!("p__[{j}]"), t)?,
                    });
                }
                let call = format!("{}({})", self.action_fn(i, *a)?, args.join(", "));
                self.w.line(format!(
                    "{:#x} => {},",
                    self.prog.action_ids[a.index()],
                    Self::wrap_call(pre, call, post, "?")
                ));
            }
            self.w.line("_ => {}");
            self.w.close("}");
            self.w
                .line("Ok(ApplyResult { hit: hit__, action_run: aid__ })");
            self.w.close("}");
            self.w.line("");
        }

        // Apply.
        let reserved: Vec<&str> = ["rt", "env", "l", "l_storage"]
            .into_iter()
            .chain(param_names.iter().map(|s| s.as_str()))
            .collect();
        let names = self.var_names(&c.apply_vars, &reserved);
        let ctx = Ctx {
            kind: BodyKind::Control,
            vars: &c.apply_vars,
            var_names: names,
            block_params: param_names.clone(),
            block_locals: local_names.clone(),
            inst: Some(i),
            pass: pass_l.clone(),
            tmp: Default::default(),
        };
        self.w.line(format!("/// `{}.apply`.", inst.path));
        self.w.line(ALLOW);
        self.w.open(format!(
            "pub fn {}({sig}) -> Result<(), Exit> {{",
            self.names.inst_apply[i]
        ));
        self.w
            .line(format!("let mut l_storage = {locals_ty}::default();"));
        self.w.line("let l = &mut l_storage;");
        for (li, init) in &c.local_inits {
            let v = self.expr(&ctx, init)?;
            let v = self.to_native(&v, &init.ty)?;
            self.w
                .line(format!("l.{} = {v};", local_names[*li as usize]));
        }
        let apply = c.apply.clone();
        self.block(&ctx, &apply)?;
        self.w.line("Ok(())");
        self.w.close("}");
        self.w.line("");
        Ok(())
    }

    fn parser(&mut self, h: Handle<Parser>) -> Result<(), BackError> {
        let p = &self.prog.parsers[h];
        let mut pn = self.local_namer(&["rt", "env", "state", "packet__"]);
        let mut param_names = Vec::new();
        let mut sig = vec![
            "rt: &mut ::p4_target::runtime::Runtime".to_string(),
            "env: &mut Env<'_>".to_string(),
        ];
        for prm in &p.params {
            match &prm.ty {
                None => {
                    param_names.push("packet__".to_string());
                    sig.push("packet__: &mut PacketIn<'_>".into());
                }
                Some(t) => {
                    let n = pn.fresh(&prm.name);
                    sig.push(format!("{n}: &mut {}", self.rust_ty(t)?));
                    param_names.push(n);
                }
            }
        }
        let reserved: Vec<&str> = ["rt", "env", "state", "packet__"]
            .into_iter()
            .chain(param_names.iter().map(|s| s.as_str()))
            .collect();
        let names = self.var_names(&p.locals, &reserved);
        let ctx = Ctx {
            kind: BodyKind::Parser,
            vars: &p.locals,
            var_names: names.clone(),
            block_params: param_names.clone(),
            block_locals: vec![],
            inst: None,
            pass: String::new(),
            tmp: Default::default(),
        };
        let mut sn = Namer::default();
        let state_names: Vec<String> = p.states.iter().map(|s| sn.fresh(&s.name)).collect();
        let enum_name = format!("{}_State", self.names.parsers[h.index()]);
        self.w.line(format!("/// States of parser `{}`.", p.name));
        self.w.line(ALLOW);
        self.w.line("#[derive(Clone, Copy, Debug, PartialEq, Eq)]");
        self.w.open(format!("enum {enum_name} {{"));
        for n in &state_names {
            self.w.line(format!("{n},"));
        }
        self.w.close("}");
        self.w.line("");
        self.w.line(format!(
            "/// Parser `{}`: `Err` carries the parser error code.",
            p.name
        ));
        self.w.line(ALLOW);
        self.w.open(format!(
            "pub fn {}({}) -> Result<(), u32> {{",
            self.names.parsers[h.index()],
            sig.join(", ")
        ));
        for (v, n) in p.locals.iter().zip(&names) {
            let t = self.rust_ty(&v.ty)?;
            self.w.line(format!(
                "let mut {n}: {t} = {};",
                self.default_value(&v.ty)?
            ));
        }
        for (li, init) in &p.local_inits {
            let v = self.expr(&ctx, init)?;
            let v = self.to_native(&v, &init.ty)?;
            self.w.line(format!("{} = {v};", names[*li as usize]));
        }
        if p.states.is_empty() {
            self.w.line("return Ok(());");
            self.w.close("}");
            return Ok(());
        }
        let target = |t: &Target| -> String {
            match t {
                Target::State(i) => format!("state = {enum_name}::{};", state_names[*i as usize]),
                Target::Accept => "return Ok(());".into(),
                Target::Reject => "return Err(::p4_target::v1model::error_code::NO_ERROR);".into(),
            }
        };
        self.w
            .line(format!("let mut state = {enum_name}::{};", state_names[0]));
        self.w.line("let mut steps__: u32 = 0;");
        self.w.open("loop {");
        // A state graph with a cycle that extracts nothing would spin
        // forever; v1model reports ParserTimeout instead.
        self.w.line("steps__ += 1;");
        self.w.open(format!("if steps__ > {PARSER_MAX_STEPS} {{"));
        self.w
            .line("return Err(::p4_target::v1model::error_code::PARSER_TIMEOUT);");
        self.w.close("}");
        self.w.open("match state {");
        for (si, st) in p.states.iter().enumerate() {
            self.w
                .open(format!("{enum_name}::{} => {{", state_names[si]));
            let body = st.body.clone();
            self.block(&ctx, &body)?;
            match &st.transition {
                Transition::Goto(t) => self.w.line(target(t)),
                Transition::Select(exprs, cases) => {
                    let mut key_names = Vec::new();
                    for (k, e) in exprs.iter().enumerate() {
                        let v = self.expr(&ctx, e)?;
                        let v = if e.ty == Ty::Bool {
                            format!("({v} as u128)")
                        } else {
                            v
                        };
                        let v = if matches!(e.ty, Ty::Error | Ty::Enum(_)) {
                            format!("({v} as u128)")
                        } else {
                            v
                        };
                        let n = format!("k{k}__");
                        self.w.line(format!("let {n}: u128 = {v};"));
                        key_names.push(n);
                    }
                    let mut first = true;
                    for c in cases {
                        let mut conds = Vec::new();
                        for (ks, k) in c.keys.iter().zip(&key_names) {
                            match ks {
                                KeySet::Any => {}
                                KeySet::Value(v) => conds.push(format!("{k} == {}", lit(*v))),
                                KeySet::Mask(v, m) => {
                                    conds.push(format!("{k} & {} == {}", lit(*m), lit(v & m)))
                                }
                                KeySet::Range(lo, hi) if *lo == 0 => {
                                    conds.push(format!("{k} <= {}", lit(*hi)))
                                }
                                KeySet::Range(lo, hi) => conds.push(format!(
                                    "({} <= {k} && {k} <= {})",
                                    lit(*lo),
                                    lit(*hi)
                                )),
                                KeySet::ValueSet(vs) => conds.push(format!(
                                    "rt.value_sets[{}].contains({k})",
                                    self.value_set_path(*vs)
                                )),
                                KeySet::ValueSetAll(vs) => {
                                    let mut cat = String::from("0u128");
                                    for (e, kn) in exprs.iter().zip(&key_names) {
                                        let w = match &e.ty {
                                            Ty::Bool => 1,
                                            Ty::Error | Ty::Enum(_) => 32,
                                            t => self.width(t),
                                        };
                                        cat = format!("{BITS}::concat({cat}, {kn}, {w})");
                                    }
                                    conds.push(format!(
                                        "rt.value_sets[{}].contains({cat})",
                                        self.value_set_path(*vs)
                                    ));
                                }
                            }
                        }
                        // Value sets with several keys take the concatenation.
                        let cond = if conds.is_empty() {
                            "true".to_string()
                        } else {
                            conds.join(" && ")
                        };
                        let kw = if first { "if" } else { "} else if" };
                        if first {
                            self.w.open(format!("{kw} {cond} {{"));
                        } else {
                            self.w.reopen(format!("{kw} {cond} {{"));
                        }
                        first = false;
                        self.w.line(target(&c.target));
                    }
                    if first {
                        self.w
                            .line("return Err(::p4_target::v1model::error_code::NO_MATCH);");
                    } else {
                        self.w.reopen("} else {");
                        self.w
                            .line("return Err(::p4_target::v1model::error_code::NO_MATCH);");
                        self.w.close("}");
                    }
                }
            }
            self.w.close("}");
        }
        self.w.close("}");
        self.w.close("}");
        self.w.close("}");
        self.w.line("");
        Ok(())
    }

    // ------------------------------------------------------------- pipeline

    fn pipeline(&mut self, main: &Main) -> Result<(), BackError> {
        let hdr_ty = match &self.prog.headers_ty {
            Some(t) => self.rust_ty(t)?,
            None => return bad("internal: unknown headers type", None),
        };
        let meta_ty = match &self.prog.meta_ty {
            Some(t) => self.rust_ty(t)?,
            None => return bad("internal: unknown metadata type", None),
        };
        let parser_fn = self.names.parsers[main.parser.index()].clone();
        let find = |c: Handle<Control>| -> Result<String, BackError> {
            self.prog
                .instances
                .iter()
                .position(|i| i.control == c && !i.path.contains('.'))
                .map(|i| self.names.inst_apply[i].clone())
                .ok_or(BackError {
                    message: "internal: top-level control without instance".into(),
                    span: None,
                })
        };
        let verify = find(main.verify)?;
        let ingress = find(main.ingress)?;
        let egress = find(main.egress)?;
        let compute = find(main.compute)?;
        let deparser = find(main.deparser)?;
        let w = &mut self.w;
        w.line("/// One packet between parse and deparse.");
        w.line(ALLOW);
        w.line("#[derive(Clone, Debug, Default)]");
        w.open("pub struct Packet {");
        w.line(format!("pub hdr: {hdr_ty},"));
        w.line(format!("pub meta: {meta_ty},"));
        w.line("pub sm: ::p4_target::v1model::StandardMetadata,");
        w.line("pub payload_offset: usize,");
        w.close("}");
        w.line("");
        w.line("/// The compiled program: its runtime state.");
        w.line(ALLOW);
        w.line("#[derive(Debug)]");
        w.open("pub struct Program {");
        w.line("pub rt: ::p4_target::runtime::Runtime,");
        w.close("}");
        w.line("");
        w.line(ALLOW);
        w.open("impl Program {");
        w.line("/// A fresh instance with empty tables.");
        w.open("pub fn new() -> Self {");
        w.line("Program { rt: ::p4_target::runtime::Runtime::new(&PROGRAM_INFO) }");
        w.close("}");
        w.line("");
        w.line("/// Parser and `verifyChecksum` on `data`, starting from `pkt`.");
        w.line("#[inline(always)]");
        w.open("fn run_parser(&mut self, data: &[u8], mut pkt: Packet) -> Packet {");
        w.line("let mut env = Env::new(data, 0, &pkt.sm);");
        w.line("let mut cur = PacketIn { data, off_bits: 0 };");
        w.open(format!(
            "if let Err(e) = {parser_fn}(&mut self.rt, &mut env, &mut cur, &mut pkt.hdr, &mut pkt.meta, &mut pkt.sm) {{"
        ));
        w.line("pkt.sm.parser_error = e;");
        w.close("}");
        w.line("pkt.payload_offset = (cur.off_bits / 8).min(data.len());");
        w.line("env.payload_offset = pkt.payload_offset;");
        w.line(format!(
            "let _ = {verify}(&mut self.rt, &mut env, &mut pkt.hdr, &mut pkt.meta);"
        ));
        w.line("env.store(&mut pkt.sm);");
        w.line("pkt");
        w.close("}");
        w.close("}");
        w.line("");
        w.line(ALLOW);
        w.open("impl Default for Program {");
        w.open("fn default() -> Self {");
        w.line("Self::new()");
        w.close("}");
        w.close("}");
        w.line("");
        w.line(ALLOW);
        w.open("impl ::p4_target::pipeline::Pipeline for Program {");
        w.line("type Packet = Packet;");
        w.open("fn info(&self) -> &'static ::p4_target::info::ProgramInfo {");
        w.line("&PROGRAM_INFO");
        w.close("}");
        w.open("fn runtime(&self) -> &::p4_target::runtime::Runtime {");
        w.line("&self.rt");
        w.close("}");
        w.open("fn runtime_mut(&mut self) -> &mut ::p4_target::runtime::Runtime {");
        w.line("&mut self.rt");
        w.close("}");
        w.open("fn parse(&mut self, data: &[u8], meta: ::p4_target::v1model::StandardMetadata) -> Packet {");
        w.line("self.run_parser(data, Packet { sm: meta, ..Default::default() })");
        w.close("}");
        w.open("fn parse_preserving(&mut self, data: &[u8], meta: ::p4_target::v1model::StandardMetadata, from: &Packet, field_list: u8) -> Packet {");
        w.line("let mut pkt = Packet { sm: meta, ..Default::default() };");
        w.line("Self::preserve_fields(from, &mut pkt, field_list);");
        w.line("self.run_parser(data, pkt)");
        w.close("}");
        for (name, f) in [("ingress", &ingress), ("egress", &egress)] {
            w.open(format!("fn {name}(&mut self, pkt: &mut Packet) {{"));
            w.line("let mut env = Env::new(&[], pkt.payload_offset, &pkt.sm);");
            w.line(format!(
                "let _ = {f}(&mut self.rt, &mut env, &mut pkt.hdr, &mut pkt.meta, &mut pkt.sm);"
            ));
            w.line("env.store(&mut pkt.sm);");
            w.close("}");
        }
        w.open("fn deparse(&mut self, pkt: &mut Packet, data: &[u8], out: &mut Vec<u8>) {");
        w.line("out.clear();");
        w.line("let mut env = Env::new(data, pkt.payload_offset, &pkt.sm);");
        w.line(format!(
            "let _ = {compute}(&mut self.rt, &mut env, &mut pkt.hdr, &mut pkt.meta);"
        ));
        w.line(format!(
            "let _ = {deparser}(&mut self.rt, &mut env, out, &mut pkt.hdr);"
        ));
        w.line("env.store(&mut pkt.sm);");
        w.line("out.extend_from_slice(&data[pkt.payload_offset.min(data.len())..]);");
        w.close("}");
        w.open("fn meta(pkt: &Packet) -> &::p4_target::v1model::StandardMetadata {");
        w.line("&pkt.sm");
        w.close("}");
        w.open("fn meta_mut(pkt: &mut Packet) -> &mut ::p4_target::v1model::StandardMetadata {");
        w.line("&mut pkt.sm");
        w.close("}");
        w.open("fn reset_user_metadata(pkt: &mut Packet) {");
        w.line("pkt.meta = Default::default();");
        w.close("}");
        w.open("fn preserve_fields(from: &Packet, to: &mut Packet, field_list: u8) {");
        let mut lists: std::collections::BTreeMap<u8, Vec<String>> = Default::default();
        if let Some(Ty::Composite(m)) = &self.prog.meta_ty {
            for f in &self.prog.composites[*m].fields {
                for n in &f.field_lists {
                    lists.entry(*n).or_default().push(field_ident(&f.name));
                }
            }
            for (n, fields) in &self.prog.synth_field_lists {
                let entry = lists.entry(*n).or_default();
                for (root, i) in fields {
                    if root == self.prog.meta_ty.as_ref().unwrap_or(&Ty::Void)
                        && let Some(f) = self.prog.composites[*m].fields.get(*i as usize)
                    {
                        entry.push(field_ident(&f.name));
                    }
                }
            }
        }
        w.open("match field_list {");
        for (n, fields) in &lists {
            w.open(format!("{n} => {{"));
            for f in fields {
                w.line(format!("to.meta.{f} = from.meta.{f};"));
            }
            w.close("}");
        }
        w.line("_ => {}");
        w.close("}");
        w.close("}");
        w.close("}");
        Ok(())
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
