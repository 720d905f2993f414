//! Which header fields a program may change after the parser extracted them.
//!
//! A header of a type no statement writes holds, at the deparser, exactly
//! the bytes it was extracted from; when it is emitted where it was parsed,
//! an in-place deparse can leave those bytes alone instead of packing its
//! fields again (`p4_target::support::WireAt`). A header of a type only
//! some of whose fields are written differs from its wire bytes in those
//! fields alone, so the in-place deparse patches just their bits.
//!
//! The answer is by type and errs on the side of "written": a type counts
//! as written as a whole when any l-value anywhere in the program
//! (assignment target, `out`/`inout` argument of any call — every argument
//! of an action, function, control, parser or user extern is taken as one
//! —, `setValid`/`setInvalid`, `push_front`/`pop_front`, an extern's `out`)
//! is a value of that type or a struct, union or stack holding one; an
//! l-value that is a field of such a header (or a part of that field: a
//! slice, a member of a struct field) writes that field of the type.
//! `extract` is the one write it does not count: it is where the wire
//! bytes come from.
//!
//! The same walk answers which fields expressions may read ([`Read`]): a
//! field of a header type no statement writes and no expression reads
//! need not be decoded at all, as the deparser takes it from the wire
//! bytes. It too errs on the side of "read": any use of a header's value
//! other than one of its fields, its validity, `extract` or `emit` (an
//! argument, an equality, a field list, a copy) reads every field. It also
//! notes the header types that `==`/`!=` compare ([`Read::compared`]).
//! A checksum field list's members summed from a header's wire bytes
//! instead of from its fields are not reads of those fields
//! (`Gen::wire_unsummed`).

use std::collections::{BTreeMap, BTreeSet};

use super::visit;
use crate::ir::*;

/// What the l-values of a program may write in its headers, by header
/// composite index.
#[derive(Debug, Default)]
pub(super) struct Written {
    /// Header types written as a whole.
    pub whole: BTreeSet<usize>,
    /// Header types (not in `whole`) some of whose top-level fields, by
    /// index, are written.
    pub fields: BTreeMap<usize, BTreeSet<u32>>,
}

/// What expressions of a program may read in its headers, by header
/// composite index.
#[derive(Debug, Default)]
pub(super) struct Read {
    /// Header types whose values are read as a whole.
    pub whole: BTreeSet<usize>,
    /// Header types some of whose top-level fields, by index, are read.
    pub fields: BTreeMap<usize, BTreeSet<u32>>,
    /// Header types whose values `==` or `!=` compare, directly or inside a
    /// struct, union, stack or list: their equality must be P4's, under
    /// which two invalid headers are equal whatever their fields hold.
    pub compared: BTreeSet<usize>,
}

/// What the l-values of the program may write in its headers.
pub(super) fn written_headers(prog: &Program) -> Written {
    walk_program(prog).written
}

/// What the expressions of the program may read in its headers.
/// `wire_unsummed(inst, b)` answers, for checksum `b` in the apply block
/// of control instance `inst`, the members of its field list that are not
/// summed from wire bytes, or `None` if it sums none from them.
pub(super) fn read_headers(prog: &Program, wire_unsummed: &WireUnsummed<'_>) -> Read {
    let mut w = Walker::new(prog);
    w.wire_unsummed = Some(wire_unsummed);
    walk(&mut w);
    w.read
}

/// See [`read_headers`].
pub(super) type WireUnsummed<'f> = dyn Fn(usize, &Builtin) -> Option<Vec<Expr>> + 'f;

/// Every statement, expression and table of the program, walked once.
fn walk_program(prog: &Program) -> Walker<'_> {
    let mut w = Walker::new(prog);
    walk(&mut w);
    w
}

fn walk(w: &mut Walker<'_>) {
    let prog = w.prog;
    for (_, a) in prog.actions.iter() {
        w.block(&a.body);
    }
    for (_, f) in prog.functions.iter() {
        w.block(&f.body);
    }
    for (h, _) in prog.tables.iter() {
        w.table(h);
    }
    for (h, c) in prog.controls.iter() {
        for (_, e) in &c.local_inits {
            w.read(e);
        }
        // An apply block is written once for each instance: checksums in
        // it are summed from wire bytes only where it has one.
        let mut instances = prog
            .instances
            .iter()
            .enumerate()
            .filter(|(_, i)| i.control == h);
        w.apply_inst = match (instances.next(), instances.next()) {
            (Some((k, _)), None) => Some(k),
            _ => None,
        };
        w.block(&c.apply);
        w.apply_inst = None;
    }
    w.parsers();
    w.finish();
}

/// What may be written in the headers before the top-level
/// `verifyChecksum` control's statements have run: by the parsers, and by
/// that control with its actions, tables and sub-controls (functions and
/// top-level actions are all counted, wherever they are called from).
/// A header of a type this leaves unwritten holds, in `verifyChecksum`, the
/// values of the bytes it was last extracted from. `None` without a
/// `main`.
pub(super) fn written_before_verify(prog: &Program) -> Option<Written> {
    let main = prog.main.as_ref()?;
    let mut w = Walker::new(prog);
    for (_, a) in prog.actions.iter().filter(|(_, a)| a.control.is_none()) {
        w.block(&a.body);
    }
    for (_, f) in prog.functions.iter() {
        w.block(&f.body);
    }
    w.parsers();
    let mut todo = vec![main.verify];
    let mut seen = BTreeSet::new();
    while let Some(h) = todo.pop() {
        if !seen.insert(h.index()) {
            continue;
        }
        let c = &prog.controls[h];
        for a in &c.actions {
            w.block(&prog.actions[*a].body);
        }
        for t in &c.tables {
            w.table(*t);
        }
        for (_, e) in &c.local_inits {
            w.read(e);
        }
        w.block(&c.apply);
        todo.extend(c.instances.iter().map(|(_, sub)| *sub));
    }
    w.finish();
    Some(w.written)
}

struct Walker<'a> {
    prog: &'a Program,
    written: Written,
    read: Read,
    /// See [`read_headers`].
    wire_unsummed: Option<&'a WireUnsummed<'a>>,
    /// The control instance whose apply block is being walked, if its
    /// control has only that one.
    apply_inst: Option<usize>,
}

impl<'a> Walker<'a> {
    fn new(prog: &'a Program) -> Self {
        Walker {
            prog,
            written: Written::default(),
            read: Read::default(),
            wire_unsummed: None,
            apply_inst: None,
        }
    }

    /// The answers: a type written (read) as a whole is not also listed
    /// by field.
    fn finish(&mut self) {
        let whole = &self.written.whole;
        self.written.fields.retain(|h, _| !whole.contains(h));
        let whole = &self.read.whole;
        self.read.fields.retain(|h, _| !whole.contains(h));
    }

    fn parsers(&mut self) {
        for (_, p) in self.prog.parsers.iter() {
            for (_, e) in &p.local_inits {
                self.read(e);
            }
            for s in &p.states {
                self.block(&s.body);
                if let Transition::Select(keys, _) = &s.transition {
                    for k in keys {
                        self.read(k);
                    }
                }
            }
        }
    }

    fn table(&mut self, t: Handle<Table>) {
        let t = &self.prog.tables[t];
        for k in &t.keys {
            self.read(&k.expr);
        }
        for args in &t.bound {
            for a in args {
                self.read(a);
                self.lvalue(a);
            }
        }
    }

    fn block(&mut self, b: &Block) {
        for s in b {
            self.stmt(s);
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::Assign(l, r, _) => {
                self.lvalue(l);
                self.read(r);
            }
            Stmt::Decl(_, init) => {
                if let Some(e) = init {
                    self.read(e);
                }
            }
            Stmt::If(c, t, e) => {
                self.read(c);
                self.block(t);
                if let Some(e) = e {
                    self.block(e);
                }
            }
            Stmt::Block(b) => self.block(b),
            Stmt::Switch(e, cases) => {
                self.read(e);
                for c in cases {
                    for l in &c.labels {
                        self.read(l);
                    }
                    if let Some(b) = &c.body {
                        self.block(b);
                    }
                }
            }
            Stmt::SwitchAction(_, cases) => {
                for c in cases {
                    if let Some(b) = &c.body {
                        self.block(b);
                    }
                }
            }
            Stmt::Call(c, _) => self.call(c),
            Stmt::Return(e) => {
                if let Some(e) = e {
                    self.read(e);
                }
            }
            Stmt::For { cond, update, body } => {
                if let Some(c) = cond {
                    self.read(c);
                }
                self.block(update);
                self.block(body);
            }
            Stmt::ForRange { lo, hi, body, .. } => {
                self.read(lo);
                self.read(hi);
                self.block(body);
            }
            Stmt::ForStack { stack, body, .. } => {
                self.read(stack);
                self.block(body);
            }
            Stmt::Exit | Stmt::Break | Stmt::Continue => {}
        }
    }

    fn call(&mut self, c: &Call) {
        match c {
            Call::Action(_, args)
            | Call::Function(_, args)
            | Call::ControlApply(_, args)
            | Call::ParserApply(_, args) => {
                for a in args {
                    self.read(a);
                    self.lvalue(a);
                }
            }
            Call::TableApply(_) => {}
            Call::Builtin(b) => self.builtin(b),
        }
    }

    fn builtin(&mut self, b: &Builtin) {
        match b {
            Builtin::MarkToDrop(e)
            | Builtin::SetValid(e)
            | Builtin::SetInvalid(e)
            | Builtin::PushFront(e, _)
            | Builtin::PopFront(e, _) => self.lvalue(e),
            Builtin::Hash {
                out,
                base,
                data,
                max,
                ..
            } => {
                self.lvalue(out);
                self.read(base);
                self.read(max);
                data.iter().for_each(|d| self.read(d));
            }
            Builtin::Random { out, lo, hi } => {
                self.lvalue(out);
                self.read(lo);
                self.read(hi);
            }
            Builtin::VerifyChecksum {
                cond,
                data,
                checksum,
                ..
            } => {
                self.read(cond);
                self.read(checksum);
                self.checksum_data(b, data);
            }
            Builtin::UpdateChecksum {
                cond,
                data,
                checksum,
                ..
            } => {
                self.read(cond);
                self.lvalue(checksum);
                self.checksum_data(b, data);
            }
            Builtin::Clone { kind, session, .. } => {
                self.read(kind);
                self.read(session);
            }
            Builtin::Digest { data, .. } => data.iter().for_each(|d| self.read(d)),
            Builtin::Truncate(e) | Builtin::Assert(e) | Builtin::Advance(e) => self.read(e),
            // Emitted from its wire bytes where it has them.
            Builtin::Emit(e) => self.place(e),
            Builtin::Verify(a, b) => {
                self.read(a);
                self.read(b);
            }
            // Where the wire bytes come from, not a change to them.
            Builtin::Extract(e, len) => {
                self.place(e);
                if let Some(l) = len {
                    self.read(l);
                }
            }
            Builtin::RegisterRead { out, index, .. } => {
                self.lvalue(out);
                self.read(index);
            }
            Builtin::RegisterWrite { index, value, .. } => {
                self.read(index);
                self.read(value);
            }
            Builtin::CounterCount { index, .. } => self.read(index),
            Builtin::MeterExecute { index, out, .. } => {
                self.read(index);
                self.lvalue(out);
            }
            Builtin::DirectMeterRead { out, .. } => self.lvalue(out),
            Builtin::UserMethod { args, .. } | Builtin::UserFunction { args, .. } => {
                for a in args {
                    self.read(a);
                    self.lvalue(a);
                }
            }
            Builtin::MarkToDropImplicit
            | Builtin::Resubmit(_)
            | Builtin::Recirculate(_)
            | Builtin::LogMsg
            | Builtin::DirectCount => {}
        }
    }

    /// Checksum `b`'s field list `data` is read, but for the members summed
    /// from wire bytes (their headers are plain places: nothing to read).
    fn checksum_data(&mut self, b: &Builtin, data: &[Expr]) {
        let unsummed = self
            .apply_inst
            .zip(self.wire_unsummed)
            .and_then(|(inst, f)| f(inst, b));
        match unsummed {
            Some(rest) => rest.iter().for_each(|d| self.read(d)),
            None => data.iter().for_each(|d| self.read(d)),
        }
    }

    /// `e` may be written: every header type in its own type, and the
    /// innermost header (or union, or stack) it is a part of: of a header,
    /// only the top-level field `e` is or lies in.
    fn lvalue(&mut self, e: &Expr) {
        self.place(e);
        self.mark_within(&e.ty);
        let mut cur = e;
        while let Some(base) = base_of(cur) {
            if let Ty::Composite(c) = &base.ty {
                match self.prog.composites[*c].kind {
                    CompositeKind::Struct => {
                        cur = base;
                        continue;
                    }
                    CompositeKind::Header => {
                        match &cur.kind {
                            ExprKind::Member(_, f) => {
                                self.written.fields.entry(c.index()).or_default().insert(*f);
                            }
                            _ => self.mark_within(&base.ty),
                        }
                        break;
                    }
                    CompositeKind::Union => {}
                }
            }
            self.mark_within(&base.ty);
            if matches!(base.ty, Ty::Composite(_) | Ty::Stack(..)) {
                break;
            }
            cur = base;
        }
    }

    /// Marks every header type reachable in `ty` written as a whole.
    fn mark_within(&mut self, ty: &Ty) {
        headers_within(self.prog, ty, &mut self.written.whole);
    }

    /// `e`'s value is read: a field of a header reads that field, anything
    /// else holding headers reads them whole. Looks for calls (with their
    /// l-value arguments) inside `e`.
    fn read(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Call(c) => self.call(c),
            ExprKind::IsValid(a) => self.place(a),
            ExprKind::Member(base, f) if self.header_type(base).is_some() => {
                let h = self.header_type(base).expect("a header");
                self.read.fields.entry(h).or_default().insert(*f);
                self.place(base);
            }
            _ => {
                if let ExprKind::Binary(BinOp::Eq | BinOp::Ne, a, _) = &e.kind {
                    headers_within(self.prog, &a.ty, &mut self.read.compared);
                }
                headers_within(self.prog, &e.ty, &mut self.read.whole);
                visit::each_operand(e, |o| self.read(o));
            }
        }
    }

    /// `e` is a place whose value is not read as a whole (an l-value, what
    /// `extract` fills or `emit` sends, the header of a field or of a
    /// validity test): only the indices on its way are read.
    fn place(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Member(a, _)
            | ExprKind::StackNext(a)
            | ExprKind::StackLast(a)
            | ExprKind::Slice(a, _, _) => self.place(a),
            ExprKind::Index(a, i) => {
                self.place(a);
                self.read(i);
            }
            ExprKind::Var(_) => {}
            _ => self.read(e),
        }
    }

    /// The composite index of `e`'s type if it is a header.
    fn header_type(&self, e: &Expr) -> Option<usize> {
        match &e.ty {
            Ty::Composite(c) if self.prog.composites[*c].kind == CompositeKind::Header => {
                Some(c.index())
            }
            _ => None,
        }
    }
}

/// Adds every header type reachable in `ty` to `set`.
fn headers_within(prog: &Program, ty: &Ty, set: &mut BTreeSet<usize>) {
    match ty {
        Ty::Composite(c) => {
            let comp = &prog.composites[*c];
            if comp.kind == CompositeKind::Header && !set.insert(c.index()) {
                return;
            }
            for f in &comp.fields {
                headers_within(prog, &f.ty, set);
            }
        }
        Ty::Stack(t, _) => headers_within(prog, t, set),
        Ty::Tuple(ts) => ts.iter().for_each(|t| headers_within(prog, t, set)),
        _ => {}
    }
}

/// The value `e` is a part of, if `e` is a field, element or slice.
fn base_of(e: &Expr) -> Option<&Expr> {
    match &e.kind {
        ExprKind::Member(a, _)
        | ExprKind::Index(a, _)
        | ExprKind::Slice(a, _, _)
        | ExprKind::StackNext(a)
        | ExprKind::StackLast(a) => Some(a),
        _ => None,
    }
}
