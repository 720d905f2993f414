//! The checked intermediate representation: what [`crate::check`] produces
//! and [`crate::back::rust`] consumes.
//!
//! Contract: every name is resolved, every expression carries its type
//! ([`Ty`]) with a concrete width (infinite-precision literals have been
//! coerced to the width of their context), and every node that can be the
//! subject of a later diagnostic keeps its [`Span`]. Declarations live in
//! [`Arena`]s and refer to each other with typed [`Handle`]s, so the back end
//! indexes infallibly. Expressions have no side effects except the explicit
//! call forms ([`ExprKind::TableHit`], [`ExprKind::Call`]), which the back end
//! evaluates in source order.
//!
//! Control and parser *instances* (P4_16 spec §11.3, instantiation) are kept
//! separate from their declarations: p4c names tables, counters and the like
//! by instance path (`MyIngress.ipv4_lpm`), and the back end emits one set of
//! functions per instance so each one indexes its own runtime objects.
//!
//! Units: widths are bits; stack sizes are elements.

pub mod info;
pub mod visit;

use std::marker::PhantomData;

/// A source location: file id plus byte range, as the front end gives it.
pub type Span = crate::diag::Span;

/// Index of an item in an [`Arena`].
pub struct Handle<T> {
    index: u32,
    _marker: PhantomData<fn() -> T>,
}

impl<T> Handle<T> {
    /// Zero-based position in the arena.
    pub fn index(self) -> usize {
        self.index as usize
    }
}

impl<T> Clone for Handle<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Handle<T> {}
impl<T> PartialEq for Handle<T> {
    fn eq(&self, other: &Self) -> bool {
        self.index == other.index
    }
}
impl<T> Eq for Handle<T> {}
impl<T> std::hash::Hash for Handle<T> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.index.hash(state)
    }
}
impl<T> std::fmt::Debug for Handle<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "#{}", self.index)
    }
}

/// A growable store of `T` with a span per item.
#[derive(Clone, Debug)]
pub struct Arena<T> {
    items: Vec<T>,
    spans: Vec<Span>,
}

impl<T> Default for Arena<T> {
    fn default() -> Self {
        Arena {
            items: Vec::new(),
            spans: Vec::new(),
        }
    }
}

impl<T> Arena<T> {
    /// Adds an item and returns its handle.
    pub fn append(&mut self, item: T, span: Span) -> Handle<T> {
        let index = self.items.len() as u32;
        self.items.push(item);
        self.spans.push(span);
        Handle {
            index,
            _marker: PhantomData,
        }
    }

    /// The span recorded for `h`.
    pub fn span(&self, h: Handle<T>) -> Span {
        self.spans[h.index()]
    }

    /// All items with their handles, in insertion order.
    pub fn iter(&self) -> impl Iterator<Item = (Handle<T>, &T)> {
        self.items.iter().enumerate().map(|(i, t)| {
            (
                Handle {
                    index: i as u32,
                    _marker: PhantomData,
                },
                t,
            )
        })
    }

    /// Number of items.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether the arena is empty.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

impl<T> std::ops::Index<Handle<T>> for Arena<T> {
    type Output = T;
    fn index(&self, h: Handle<T>) -> &T {
        &self.items[h.index()]
    }
}

impl<T> std::ops::IndexMut<Handle<T>> for Arena<T> {
    fn index_mut(&mut self, h: Handle<T>) -> &mut T {
        &mut self.items[h.index()]
    }
}

/// A type of the checked program.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Ty {
    /// `bool`.
    Bool,
    /// `bit<W>`, `0 <= W <= 2048` (above 128 bits held as wide values).
    Bit(u32),
    /// `int<W>`, `0 <= W <= 2048`, two's complement masked to `W` bits.
    Int(u32),
    /// `varbit<W>`: at most `W` bits (a multiple of 8 in practice).
    Varbit(u32),
    /// `error`, held as a `u32` code.
    Error,
    /// A plain `enum`, held as the `u32` index of its member.
    Enum(Handle<EnumDecl>),
    /// A serializable `enum bit<W>`: held as its underlying `bit<W>`.
    SerEnum(Handle<EnumDecl>),
    /// A header, struct or header union.
    Composite(Handle<Composite>),
    /// A header stack `H[N]`.
    Stack(Box<Ty>, u32),
    /// A string literal (`log_msg` only).
    Str,
    /// A tuple or list expression type (extern arguments only).
    Tuple(Vec<Ty>),
    /// No value (functions returning nothing).
    Void,
}

impl Ty {
    /// Width in bits of a scalar bit-string type (`bit`, `int`, serializable
    /// enum given its declaration), or `None`.
    pub fn scalar_width(&self, prog: &Program) -> Option<u32> {
        match self {
            Ty::Bit(w) | Ty::Int(w) => Some(*w),
            Ty::Bool => Some(1),
            Ty::SerEnum(e) => prog.enums[*e]
                .repr
                .as_ref()
                .and_then(|r| r.scalar_width(prog)),
            _ => None,
        }
    }

    /// Bits of a fixed-width type as a header lays it out: a scalar's
    /// width, or the sum of a struct's fields (P4_16 §7.2.2: a header field
    /// may be a struct of such types); `None` for anything else.
    pub fn serial_width(&self, prog: &Program) -> Option<u32> {
        match self {
            Ty::Composite(c) if prog.composites[*c].kind == CompositeKind::Struct => prog
                .composites[*c]
                .fields
                .iter()
                .map(|f| f.ty.serial_width(prog))
                .sum(),
            _ => self.scalar_width(prog),
        }
    }

    /// Whether this is `int<W>` (or a serializable enum over `int<W>`).
    pub fn is_signed(&self, prog: &Program) -> bool {
        match self {
            Ty::Int(_) => true,
            Ty::SerEnum(e) => matches!(prog.enums[*e].repr, Some(Ty::Int(_))),
            _ => false,
        }
    }
}

/// Header, struct or union.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompositeKind {
    /// `header`.
    Header,
    /// `header_union`.
    Union,
    /// `struct`.
    Struct,
}

/// A field of a composite type.
#[derive(Clone, Debug)]
pub struct Field {
    /// Source name.
    pub name: String,
    /// Type.
    pub ty: Ty,
    /// `@field_list(n, ..)` indices on this field.
    pub field_lists: Vec<u8>,
    /// Where declared.
    pub span: Span,
}

/// A `header`, `header_union` or `struct` declaration.
#[derive(Clone, Debug)]
pub struct Composite {
    /// Source name.
    pub name: String,
    /// Which kind.
    pub kind: CompositeKind,
    /// Fields in order.
    pub fields: Vec<Field>,
    /// `@controller_header("packet_in"/"packet_out")` name, if any.
    pub controller_header: Option<String>,
    /// Whether the last field is padding the checker added to a header
    /// that is not a whole number of bytes (as p4c does for BMv2): it is
    /// extracted and emitted like a field, but no initialiser gives it.
    pub padded: bool,
}

impl Composite {
    /// The fields a program declared (all but the padding).
    pub fn declared_fields(&self) -> &[Field] {
        &self.fields[..self.fields.len() - usize::from(self.padded)]
    }

    /// Bits of the padding the checker added (0 if none); the sizes a
    /// program asks for (`minSizeInBits()`) leave them out, as p4c does.
    pub fn padding_bits(&self) -> u32 {
        match (self.padded, self.fields.last()) {
            (true, Some(Field { ty: Ty::Bit(w), .. })) => *w,
            _ => 0,
        }
    }

    /// Bits of a header's fields other than its varbit field.
    pub fn fixed_bits(&self, prog: &Program) -> u32 {
        self.fields
            .iter()
            .map(|f| match f.ty {
                Ty::Varbit(_) => 0,
                _ => f.ty.serial_width(prog).unwrap_or(0),
            })
            .sum()
    }

    /// A header's fields in wire order with struct fields flattened (in
    /// declaration order, nested structs too): each leaf's path of field
    /// names from the header and its type (a scalar or the varbit).
    pub fn leaves(&self, prog: &Program) -> Vec<(Vec<String>, Ty)> {
        fn walk(
            fields: &[Field],
            prefix: &mut Vec<String>,
            prog: &Program,
            out: &mut Vec<(Vec<String>, Ty)>,
        ) {
            for f in fields {
                prefix.push(f.name.clone());
                match &f.ty {
                    Ty::Composite(c) if prog.composites[*c].kind == CompositeKind::Struct => {
                        walk(&prog.composites[*c].fields, prefix, prog, out)
                    }
                    ty => out.push((prefix.clone(), ty.clone())),
                }
                prefix.pop();
            }
        }
        let mut out = Vec::new();
        walk(&self.fields, &mut Vec::new(), prog, &mut out);
        out
    }

    /// The varbit field of a header: (index, maximum bits).
    pub fn varbit(&self) -> Option<(usize, u32)> {
        self.fields
            .iter()
            .enumerate()
            .find_map(|(i, f)| match f.ty {
                Ty::Varbit(w) => Some((i, w)),
                _ => None,
            })
    }

    /// Total bits of a header (varbit counted at its maximum).
    pub fn header_bits(&self, prog: &Program) -> u32 {
        self.fields
            .iter()
            .map(|f| match f.ty {
                Ty::Varbit(w) => w,
                _ => f.ty.serial_width(prog).unwrap_or(0),
            })
            .sum()
    }
}

/// An `enum` (plain or serializable).
#[derive(Clone, Debug)]
pub struct EnumDecl {
    /// Source name.
    pub name: String,
    /// Underlying type of a serializable enum.
    pub repr: Option<Ty>,
    /// Members and their values (index for plain enums).
    pub members: Vec<(String, u128)>,
}

/// How a parameter is passed (spec §6.8).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// `in` or directionless (action data in actions).
    In,
    /// `out`.
    Out,
    /// `inout`.
    InOut,
}

/// A variable of a function-like body: parameter or local.
#[derive(Clone, Debug)]
pub struct Var {
    /// Source name.
    pub name: String,
    /// Type.
    pub ty: Ty,
    /// Direction for parameters; `None` for locals.
    pub param: Option<Direction>,
}

/// Which storage a variable reference names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VarRef {
    /// A local or parameter of the innermost body (action, function, parser
    /// state body, apply block), by index into its `vars`.
    Local(u32),
    /// A parameter of the enclosing control or parser.
    BlockParam(u32),
    /// A variable declared at control or parser level.
    BlockLocal(u32),
}

/// Unary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    /// `!` on bool.
    Not,
    /// `~` on bit strings.
    BitNot,
    /// `-` (two's complement negation, wraps).
    Neg,
}

/// Binary operators (spec §8.5–8.7).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `%`
    Mod,
    /// `|+|`
    SatAdd,
    /// `|-|`
    SatSub,
    /// `&`
    BitAnd,
    /// `|`
    BitOr,
    /// `^`
    BitXor,
    /// `<<`
    Shl,
    /// `>>`
    Shr,
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `&&`
    And,
    /// `||`
    Or,
    /// `++` (result width is the sum)
    Concat,
}

/// A typed expression.
#[derive(Clone, Debug)]
pub struct Expr {
    /// What it computes.
    pub kind: ExprKind,
    /// Its type, with concrete widths.
    pub ty: Ty,
    /// Source location.
    pub span: Span,
}

/// Expression forms.
#[derive(Clone, Debug)]
pub enum ExprKind {
    /// An integer of the expression's type, masked to its width.
    Int(u128),
    /// An integer of a `bit<W>`/`int<W>` type wider than 128 bits whose
    /// value needs more than 128 bits: little-endian `u64` limbs (exactly
    /// `W.div_ceil(64)`), masked to the width. Values below 2^128 of a wide
    /// type may also be [`ExprKind::Int`].
    WideInt(Box<[u64]>),
    /// `true`/`false`.
    Bool(bool),
    /// An `error` member by code.
    ErrorCode(u32),
    /// An enum member by index.
    EnumMember(Handle<EnumDecl>, u32),
    /// A variable.
    Var(VarRef),
    /// Field `idx` of a struct, header or union.
    Member(Box<Expr>, u32),
    /// Stack element.
    Index(Box<Expr>, Box<Expr>),
    /// `stack.next` (parser only).
    StackNext(Box<Expr>),
    /// `stack.last`.
    StackLast(Box<Expr>),
    /// `stack.lastIndex`.
    StackLastIndex(Box<Expr>),
    /// `stack.nextIndex` (v1.2.2).
    StackNextIndex(Box<Expr>),
    /// `h.isValid()`.
    IsValid(Box<Expr>),
    /// Unary operation.
    Unary(UnOp, Box<Expr>),
    /// Binary operation; operands have the same type except shifts
    /// (right operand any unsigned width) and `++`.
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `e[hi:lo]`.
    Slice(Box<Expr>, u32, u32),
    /// Cast of the operand to the expression's type.
    Cast(Box<Expr>),
    /// `c ? a : b`.
    Mux(Box<Expr>, Box<Expr>, Box<Expr>),
    /// A list or struct-valued expression `{a, b}` (members in field order
    /// when the type is a composite).
    List(Vec<Expr>),
    /// A tuple-typed table apply result: `t.apply().hit` (true) / `.miss` (false).
    TableHit(Handle<Table>, bool),
    /// A call with a value.
    Call(Box<Call>),
    /// `pkt.lookahead<T>()` (parser only); value of the expression's type.
    Lookahead,
    /// `pkt.length()` (parser only): the whole packet's length in bytes as
    /// the parser receives it, a `bit<32>`.
    PacketLength,
    /// The default value of a header, header union, struct or stack type
    /// (`{#}` and the fields `...` leaves out, P4_16 §8.17, §8.26): headers
    /// invalid with their fields zero, everything else zero or false.
    Default,
}

/// Something called.
#[derive(Clone, Debug)]
pub enum Call {
    /// An action called directly.
    Action(Handle<Action>, Vec<Expr>),
    /// A function.
    Function(Handle<Function>, Vec<Expr>),
    /// `t.apply()` as a statement.
    TableApply(Handle<Table>),
    /// `inst.apply(args)` of a control instance declared in the enclosing
    /// control (a `packet_out` argument is implied: the caller's own).
    ControlApply(u32, Vec<Expr>),
    /// `sub.apply(pkt, args)` of a sub-parser (the packet argument is implied).
    ParserApply(Handle<Parser>, Vec<Expr>),
    /// A built-in extern function or method.
    Builtin(Box<Builtin>),
}

/// Built-in v1model / core externs.
#[derive(Clone, Debug)]
pub enum Builtin {
    /// `mark_to_drop(sm)`.
    MarkToDrop(Expr),
    /// The deprecated `mark_to_drop()` in a top-level action: the standard
    /// metadata of the control the action runs in (the checker only lets
    /// controls with a standard_metadata_t parameter use such an action).
    MarkToDropImplicit,
    /// `hash(out, algo, base, data, max)`.
    Hash {
        /// Destination l-value.
        out: Expr,
        /// Algorithm.
        algo: p4_target::info::HashAlgorithm,
        /// Base.
        base: Expr,
        /// Field list members.
        data: Vec<Expr>,
        /// Modulus (`0` means no reduction).
        max: Expr,
    },
    /// `random(out, lo, hi)`.
    Random {
        /// Destination.
        out: Expr,
        /// Lowest.
        lo: Expr,
        /// Highest.
        hi: Expr,
    },
    /// `verify_checksum[_with_payload](cond, data, checksum, algo)`.
    VerifyChecksum {
        /// Condition.
        cond: Expr,
        /// Field list.
        data: Vec<Expr>,
        /// Expected checksum.
        checksum: Expr,
        /// Algorithm.
        algo: p4_target::info::HashAlgorithm,
        /// Append the payload.
        with_payload: bool,
    },
    /// `update_checksum[_with_payload](cond, data, checksum, algo)`.
    UpdateChecksum {
        /// Condition.
        cond: Expr,
        /// Field list.
        data: Vec<Expr>,
        /// Destination l-value.
        checksum: Expr,
        /// Algorithm.
        algo: p4_target::info::HashAlgorithm,
        /// Append the payload.
        with_payload: bool,
    },
    /// `clone` / `clone3` / `clone_preserving_field_list`.
    Clone {
        /// `CloneType` expression (enum member 0 = I2E, 1 = E2E).
        kind: Expr,
        /// Session id.
        session: Expr,
        /// Field list index.
        field_list: Option<u8>,
    },
    /// `resubmit_preserving_field_list(n)` (`resubmit(x)` as index 0).
    Resubmit(u8),
    /// `recirculate_preserving_field_list(n)`.
    Recirculate(u8),
    /// `digest<T>(receiver, data)`.
    Digest {
        /// Index into `ProgramInfo.digests`.
        digest: u32,
        /// Struct members, flattened, in order.
        data: Vec<Expr>,
    },
    /// `truncate(len)`.
    Truncate(Expr),
    /// `assert(c)` / `assume(c)`: on failure the packet is dropped and the
    /// control chain stops.
    Assert(Expr),
    /// `log_msg(..)`: no effect.
    LogMsg,
    /// `pkt.extract(hdr)` or `pkt.extract(hdr, varbit_len)`.
    Extract(Expr, Option<Expr>),
    /// `pkt.advance(bits)`.
    Advance(Expr),
    /// `pkt.emit(hdr or struct)`.
    Emit(Expr),
    /// `verify(cond, err)`.
    Verify(Expr, Expr),
    /// `h.setValid()`.
    SetValid(Expr),
    /// `h.setInvalid()`.
    SetInvalid(Expr),
    /// `stack.push_front(n)`.
    PushFront(Expr, u32),
    /// `stack.pop_front(n)`.
    PopFront(Expr, u32),
    /// `reg.read(out, index)`.
    RegisterRead {
        /// Extern instance index within the enclosing block.
        inst: u32,
        /// Destination.
        out: Expr,
        /// Cell index.
        index: Expr,
    },
    /// `reg.write(index, value)`.
    RegisterWrite {
        /// Extern instance index.
        inst: u32,
        /// Cell index.
        index: Expr,
        /// Value.
        value: Expr,
    },
    /// `counter.count(index)`.
    CounterCount {
        /// Extern instance index.
        inst: u32,
        /// Cell index.
        index: Expr,
    },
    /// `meter.execute_meter(index, out)`.
    MeterExecute {
        /// Extern instance index.
        inst: u32,
        /// Cell index.
        index: Expr,
        /// Destination colour.
        out: Expr,
    },
    /// `direct_counter.count()`: counted by the table lookup already.
    DirectCount,
    /// `direct_meter.read(out)`: the colour of the entry the owning table hit.
    DirectMeterRead {
        /// Extern instance index (a `direct_meter`).
        inst: u32,
        /// Destination.
        out: Expr,
    },
    /// A method of an instance of a user-defined extern object; the call's
    /// value (if any) is the method's return value.
    UserMethod {
        /// Extern instance index within the enclosing control.
        inst: u32,
        /// Index into the object type's [`UserExtern::methods`].
        method: u32,
        /// Arguments in parameter order; `out`/`inout` ones are l-values.
        args: Vec<Expr>,
    },
    /// A user-defined extern function.
    UserFunction {
        /// Index into [`Program::user_functions`].
        func: u32,
        /// Arguments in parameter order; `out`/`inout` ones are l-values.
        args: Vec<Expr>,
    },
}

/// A statement.
#[derive(Clone, Debug)]
pub enum Stmt {
    /// `lhs = rhs;`
    Assign(Expr, Expr, Span),
    /// A local variable declaration with optional initialiser.
    Decl(u32, Option<Expr>),
    /// `if`.
    If(Expr, Block, Option<Block>),
    /// `{ .. }`.
    Block(Block),
    /// `switch (e) { .. }` over a bit/enum/error value.
    Switch(Expr, Vec<SwitchCase>),
    /// `switch (t.apply().action_run) { .. }`: cases are action ids.
    SwitchAction(Handle<Table>, Vec<ActionCase>),
    /// A call statement.
    Call(Call, Span),
    /// `exit;`
    Exit,
    /// `return;` / `return e;`
    Return(Option<Expr>),
    /// `for (..; cond; update) body` (its initialisers come before it in the
    /// enclosing block): the condition is checked before each pass, the
    /// update runs after each pass, `continue` included.
    For {
        /// Condition; `None` loops until `break`.
        cond: Option<Expr>,
        /// Statements run after each pass.
        update: Block,
        /// Body.
        body: Block,
    },
    /// `for (T v in lo .. hi) body`: `v` takes every value from `lo` to `hi`
    /// inclusive (none when `lo > hi`); the bounds are evaluated once.
    ForRange {
        /// The loop variable (a local of the body, declared before the loop).
        var: u32,
        /// Low end.
        lo: Expr,
        /// High end.
        hi: Expr,
        /// Body.
        body: Block,
    },
    /// `for (H v in stack) body`: `v` is a copy of each element in turn.
    ForStack {
        /// The loop variable (declared before the loop).
        var: u32,
        /// The stack.
        stack: Expr,
        /// Body.
        body: Block,
    },
    /// `break;` out of the innermost loop.
    Break,
    /// `continue;` with the innermost loop's next pass.
    Continue,
}

/// One `switch` case: labels (empty = `default`) and body (`None` falls through).
#[derive(Clone, Debug)]
pub struct SwitchCase {
    /// Label values.
    pub labels: Vec<Expr>,
    /// Whether this is the default case.
    pub is_default: bool,
    /// Body; `None` falls through to the next case.
    pub body: Option<Block>,
}

/// One case of an action-run switch.
#[derive(Clone, Debug)]
pub struct ActionCase {
    /// Actions (empty with `is_default`).
    pub actions: Vec<Handle<Action>>,
    /// `default:`.
    pub is_default: bool,
    /// Body; `None` falls through.
    pub body: Option<Block>,
}

/// A sequence of statements.
pub type Block = Vec<Stmt>;

/// An action.
#[derive(Clone, Debug)]
pub struct Action {
    /// Source name.
    pub name: String,
    /// Fully qualified P4Info name (without instance prefix for top-level actions).
    /// For an action of a control this is qualified by the control's type
    /// name; the control-plane name of an action of a control instantiated
    /// once is its instance's path and `local_name` (see
    /// `check::program_info`), as p4c names them.
    pub p4_name: String,
    /// The name relative to the enclosing control instance (`@name("x")`
    /// or the source name); `None` for top-level actions and absolute
    /// `@name(".x")`s.
    pub local_name: Option<String>,
    /// Enclosing control declaration, `None` for top-level actions.
    pub control: Option<Handle<Control>>,
    /// Parameters first (directional then action data), then locals.
    pub vars: Vec<Var>,
    /// Number of parameters at the front of `vars`.
    pub n_params: u32,
    /// Number of directional parameters (they come first).
    pub n_directional: u32,
    /// Body.
    pub body: Block,
    /// For a top-level action: the top-level extern instances it uses (the
    /// `inst` indices of its extern calls point here; an action of a
    /// control uses the control's).
    pub externs: Vec<ExternInst>,
    /// Where declared.
    pub span: Span,
}

impl Action {
    /// The action-data (control-plane) parameters: `vars[n_directional..n_params]`.
    pub fn data_params(&self) -> &[Var] {
        &self.vars[self.n_directional as usize..self.n_params as usize]
    }
}

/// A function (spec §10): called with copy-in/copy-out.
#[derive(Clone, Debug)]
pub struct Function {
    /// Source name.
    pub name: String,
    /// Return type.
    pub ret: Ty,
    /// Parameters then locals.
    pub vars: Vec<Var>,
    /// Number of parameters.
    pub n_params: u32,
    /// Body.
    pub body: Block,
    /// The top-level extern instances the body uses (the `inst` indices of
    /// its extern calls point here).
    pub externs: Vec<ExternInst>,
}

/// Match kind of a key field, including v1model's `selector`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyKind {
    /// A P4Info match kind.
    Match(p4_target::info::MatchKind),
    /// `selector`: input to the action selector's hash.
    Selector,
}

/// One key field.
#[derive(Clone, Debug)]
pub struct Key {
    /// Key expression.
    pub expr: Expr,
    /// Match kind.
    pub kind: KeyKind,
    /// P4Info name.
    pub name: String,
}

/// A table declaration.
#[derive(Clone, Debug)]
pub struct Table {
    /// Source name.
    pub name: String,
    /// Enclosing control.
    pub control: Handle<Control>,
    /// Keys in order.
    pub keys: Vec<Key>,
    /// Actions the table may run, in the `actions` list order.
    pub actions: Vec<Handle<Action>>,
    /// Per action, the arguments bound to its directional parameters in the
    /// `actions` list (`a(hdr.x)`).
    pub bound: Vec<Vec<Expr>>,
    /// Extern instance index (in the control) of the action profile/selector.
    pub implementation: Option<u32>,
    /// Extern instance index of the `direct_meter` in `meters = ...`.
    pub direct_meter: Option<u32>,
    /// Where declared.
    pub span: Span,
}

/// What kind of extern object an instance is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExternKind {
    /// `register<T>(size)`.
    Register {
        /// Cell type: `bit<W>`, `int<W>`, `bool` or a serializable enum.
        cell: Ty,
        /// Cell width in bits.
        width: u32,
        /// Cells.
        size: u32,
    },
    /// `counter(size, type)`.
    Counter {
        /// Cells.
        size: u32,
        /// What is counted.
        unit: p4_target::info::CounterUnit,
    },
    /// `direct_counter(type)`.
    DirectCounter(p4_target::info::CounterUnit),
    /// `meter(size, type)`.
    Meter {
        /// Cells.
        size: u32,
        /// What is metered.
        unit: p4_target::info::CounterUnit,
    },
    /// `direct_meter<T>(type)`.
    DirectMeter(p4_target::info::CounterUnit),
    /// `action_profile(size)`.
    ActionProfile(u32),
    /// `action_selector(algo, size, width)`.
    ActionSelector(p4_target::info::HashAlgorithm, u32, u32),
    /// An instance of a user-defined extern object type.
    User {
        /// Index into [`Program::user_externs`].
        decl: u32,
        /// Which of its constructors, an index into [`UserExtern::ctors`].
        ctor: u32,
        /// Constructor arguments, folded, in parameter order; a tuple
        /// argument gives its elements one after the other.
        args: Vec<ConstValue>,
    },
}

impl ExternKind {
    /// The v1model extern type name (`register`, `action_selector`...), as
    /// [`crate::v1model::object`] knows it.
    pub fn type_name(&self) -> &'static str {
        match self {
            ExternKind::Register { .. } => "register",
            ExternKind::Counter { .. } => "counter",
            ExternKind::DirectCounter(_) => "direct_counter",
            ExternKind::Meter { .. } => "meter",
            ExternKind::DirectMeter(_) => "direct_meter",
            ExternKind::ActionProfile(_) => "action_profile",
            ExternKind::ActionSelector(..) => "action_selector",
            ExternKind::User { .. } => "extern",
        }
    }
}

/// A parameter of a user-defined extern method, function or constructor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserParam {
    /// Source name.
    pub name: String,
    /// Direction (`In` for directionless).
    pub dir: Direction,
    /// Type.
    pub ty: Ty,
    /// Declared `@optional`: a call may leave it out, and then binds to a
    /// copy of the signature without it (see `check::user_externs`).
    pub optional: bool,
    /// A `list<T>` constructor parameter (P4_16 §7.2.10): `ty` is T, and
    /// the argument any number of T (its values are the count, then each
    /// element's).
    pub list: bool,
}

/// A user-defined extern function, or a method of a user extern object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserFn {
    /// Source name (overloads share it).
    pub name: String,
    /// For a copy of a generic function or method: its type arguments.
    pub type_args: Vec<Ty>,
    /// Parameters in order.
    pub params: Vec<UserParam>,
    /// Return type ([`Ty::Void`] for none).
    pub ret: Ty,
    /// Whether the program calls it (functions only; the back end leaves
    /// out what is not used).
    pub used: bool,
    /// Where declared.
    pub span: Span,
}

/// A user-defined extern object type (`extern Name { Name(..); R m(..); }`):
/// the target (a Rust implementation supplied when building a switch)
/// provides its behaviour.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserExtern {
    /// Source name.
    pub name: String,
    /// For a copy of a generic extern type: its type arguments.
    pub type_args: Vec<Ty>,
    /// Constructors' parameters (`in`, compile-time values), one list per
    /// constructor in declaration order (P4_16 §7.2.12 lets them overload
    /// by arity; a type that declares none is never instantiated).
    pub ctors: Vec<Vec<UserParam>>,
    /// Methods, overloads included, in declaration order.
    pub methods: Vec<UserFn>,
    /// Whether the program instantiates it (the back end leaves out what is
    /// not used).
    pub used: bool,
    /// Where declared.
    pub span: Span,
}

/// One object of a user extern type: program-wide, so a top-level instance
/// used by several controls is one object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserInstance {
    /// Qualified name (`MyIngress.c`, or the top-level name).
    pub name: String,
    /// Index into [`Program::user_externs`].
    pub decl: u32,
    /// Which of its constructors, an index into [`UserExtern::ctors`].
    pub ctor: u32,
    /// Constructor arguments, as in [`ExternKind::User`].
    pub args: Vec<ConstValue>,
}

/// An extern object instantiated in a control.
#[derive(Clone, Debug)]
pub struct ExternInst {
    /// Source name.
    pub name: String,
    /// Kind.
    pub kind: ExternKind,
    /// Where declared.
    pub span: Span,
}

/// A parser or control parameter's role.
#[derive(Clone, Debug)]
pub struct BlockParam {
    /// Source name.
    pub name: String,
    /// Type; `None` for `packet_in`/`packet_out`.
    pub ty: Option<Ty>,
    /// Direction.
    pub dir: Direction,
    /// The default value of an `in` or directionless parameter (P4_16
    /// §6.8.3), a compile-time constant, that an `apply` leaving the
    /// argument out passes instead.
    pub default: Option<Expr>,
}

/// A control declaration.
#[derive(Clone, Debug)]
pub struct Control {
    /// Source name.
    pub name: String,
    /// Parameters (`packet_out` has `ty: None`).
    pub params: Vec<BlockParam>,
    /// Control-level variables.
    pub locals: Vec<Var>,
    /// Initialisers of control-level variables, run at the start of apply.
    pub local_inits: Vec<(u32, Expr)>,
    /// Extern objects.
    pub externs: Vec<ExternInst>,
    /// Sub-control instances: (instance name, control).
    pub instances: Vec<(String, Handle<Control>)>,
    /// Tables declared here.
    pub tables: Vec<Handle<Table>>,
    /// Actions declared here.
    pub actions: Vec<Handle<Action>>,
    /// The apply block.
    pub apply: Block,
    /// Variables of the apply block.
    pub apply_vars: Vec<Var>,
}

/// How a parser state leaves.
#[derive(Clone, Debug)]
pub enum Transition {
    /// To a state (index into `Parser::states`), or accept/reject.
    Goto(Target),
    /// `select`.
    Select(Vec<Expr>, Vec<SelectCase>),
}

/// A transition target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// A declared state.
    State(u32),
    /// `accept`.
    Accept,
    /// `reject`.
    Reject,
}

/// One keyset element of a select case.
#[derive(Clone, Debug)]
pub enum KeySet {
    /// `default` / `_`.
    Any,
    /// `v` (exact).
    Value(u128),
    /// `v &&& m`.
    Mask(u128, u128),
    /// `lo .. hi`.
    Range(u128, u128),
    /// A parser value set (index into `ProgramInfo.value_sets`).
    ValueSet(u32),
    /// A value set over the whole tuple of select keys, matched against
    /// their concatenation (first key most significant).
    ValueSetAll(u32),
}

/// One `select` case.
#[derive(Clone, Debug)]
pub struct SelectCase {
    /// One keyset per select expression.
    pub keys: Vec<KeySet>,
    /// Where to go.
    pub target: Target,
}

/// A parser state.
#[derive(Clone, Debug)]
pub struct State {
    /// Source name.
    pub name: String,
    /// Statements.
    pub body: Block,
    /// Transition.
    pub transition: Transition,
}

/// A parser declaration.
#[derive(Clone, Debug)]
pub struct Parser {
    /// Source name.
    pub name: String,
    /// Parameters (`packet_in` has `ty: None`).
    pub params: Vec<BlockParam>,
    /// Parser-level and state-local variables (states share this list).
    pub locals: Vec<Var>,
    /// Initialisers of parser-level variables.
    pub local_inits: Vec<(u32, Expr)>,
    /// States; `start` first.
    pub states: Vec<State>,
    /// Value sets declared here: (name, ProgramInfo value set index is assigned at instance level).
    pub value_sets: Vec<(String, u32, u32)>,
    /// Extern instances its states use: its own (`register<..>(n) r;` in
    /// the parser) and the top-level ones (the `inst` indices of its
    /// extern calls point here).
    pub externs: Vec<ExternInst>,
}

/// The `V1Switch` package arguments.
#[derive(Clone, Debug)]
pub struct Main {
    /// Parser.
    pub parser: Handle<Parser>,
    /// `verifyChecksum`.
    pub verify: Handle<Control>,
    /// Ingress.
    pub ingress: Handle<Control>,
    /// Egress.
    pub egress: Handle<Control>,
    /// `computeChecksum`.
    pub compute: Handle<Control>,
    /// Deparser.
    pub deparser: Handle<Control>,
    /// Instance names p4c uses as name prefixes (the declaration names).
    pub names: [String; 6],
}

/// A whole checked program.
#[derive(Clone, Debug, Default)]
pub struct Program {
    /// Program name (file stem).
    pub name: String,
    /// Headers, structs, unions.
    pub composites: Arena<Composite>,
    /// Enums.
    pub enums: Arena<EnumDecl>,
    /// `error` members in code order (core ones first).
    pub errors: Vec<String>,
    /// Actions.
    pub actions: Arena<Action>,
    /// Functions.
    pub functions: Arena<Function>,
    /// Tables.
    pub tables: Arena<Table>,
    /// Controls.
    pub controls: Arena<Control>,
    /// Parsers.
    pub parsers: Arena<Parser>,
    /// Package instantiation.
    pub main: Option<Main>,
    /// Type of the `headers` parameter (second parser parameter).
    pub headers_ty: Option<Ty>,
    /// Type of the user metadata parameter.
    pub meta_ty: Option<Ty>,
    /// Control instances; the five top-level controls come first in
    /// `verify, ingress, egress, compute, deparser` order.
    pub instances: Vec<ControlInstance>,
    /// Value set index (into `ProgramInfo.value_sets`) of each parser value set.
    pub value_set_index: Vec<u32>,
    /// Field lists made up for deprecated `resubmit(data)`-style calls:
    /// (index, [(type of the struct, field index)]); only fields of the
    /// user metadata are preserved.
    pub synth_field_lists: Vec<(u8, Vec<(Ty, u32)>)>,
    /// Top-level `const` declarations with a number or boolean value, in
    /// declaration order (the Rust back end emits them as `pub const`).
    pub constants: Vec<Constant>,
    /// User-defined extern object types that are declared (used or not).
    pub user_externs: Vec<UserExtern>,
    /// User-defined extern functions that are declared, overloads apart.
    pub user_functions: Vec<UserFn>,
}

/// A top-level `const` with its folded value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Constant {
    /// The P4 name.
    pub name: String,
    /// The value, with its P4 type.
    pub value: ConstValue,
    /// The declaration.
    pub span: Span,
}

/// The value of a [`Constant`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConstValue {
    /// `bool`.
    Bool(bool),
    /// `bit<width>` (or a serializable enum over it), masked to the width.
    Bit {
        /// Declared width.
        width: u32,
        /// Value.
        value: u128,
    },
    /// `int<width>`, sign-extended.
    Int {
        /// Declared width.
        width: u32,
        /// Value.
        value: i128,
    },
    /// Arbitrary-precision `int`.
    Integer(i128),
}

/// One instance of a control. Where its tables and externs are in the
/// runtime is in [`info::Layout::instances`], same index.
#[derive(Clone, Debug)]
pub struct ControlInstance {
    /// Instance path, the P4Info name prefix (`MyIngress`, `MyIngress.sub`).
    pub path: String,
    /// Declaration.
    pub control: Handle<Control>,
    /// Index into `Program::instances` of each of `control.instances`:
    /// the instance tree itself (an entry may be an instance passed in as a
    /// constructor argument), built with the instances, not a fact computed
    /// after checking, so it stays here rather than in the layout.
    pub sub: Vec<u32>,
}
