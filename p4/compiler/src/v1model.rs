//! The v1model (and P4 core) extern signatures, declared once: the checker
//! binds call arguments (positional or named, P4_16 §6.8.2) against these
//! parameter lists and checks argument counts with them, and the Rust back
//! end takes from them the runtime collection each extern object lives in.
//!
//! Contract: parameter names and order are those of p4c's `v1model.p4` and
//! `core.p4` (the names a program may use as named arguments); overloads
//! (`log_msg`, `mark_to_drop`, two-argument `extract`) are separate entries
//! told apart by arity. What depends on `V1MODEL_VERSION` (the index type
//! of `counter`, `meter` and `register`, and their type parameters) is
//! declared for both versions, and the type parameters of the generic
//! extern functions with the parameters they type. Pure data, no
//! allocation.

/// How a parameter is passed (P4_16 §6.8).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    /// `in` or directionless.
    In,
    /// `out`.
    Out,
    /// `inout`.
    InOut,
}

/// One parameter of an extern function, method or constructor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Param {
    /// Its name (usable as a named argument).
    pub name: &'static str,
    /// Its direction.
    pub dir: Dir,
}

const fn p(name: &'static str, dir: Dir) -> Param {
    Param { name, dir }
}

/// An extern function or method: its name and parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Signature {
    /// Function or method name.
    pub name: &'static str,
    /// Parameters in order.
    pub params: &'static [Param],
}

const fn sig(name: &'static str, params: &'static [Param]) -> Signature {
    Signature { name, params }
}

use Dir::{In, InOut, Out};

/// Extern functions of `core.p4` and `v1model.p4`.
pub const FUNCTIONS: &[Signature] = &[
    sig("verify", &[p("check", In), p("toSignal", In)]),
    sig("static_assert", &[p("check", In), p("message", In)]),
    sig("static_assert", &[p("check", In)]),
    sig("mark_to_drop", &[]),
    sig("mark_to_drop", &[p("standard_metadata", InOut)]),
    sig(
        "hash",
        &[
            p("result", Out),
            p("algo", In),
            p("base", In),
            p("data", In),
            p("max", In),
        ],
    ),
    sig("random", &[p("result", Out), p("lo", In), p("hi", In)]),
    sig("digest", &[p("receiver", In), p("data", In)]),
    sig(
        "verify_checksum",
        &[
            p("condition", In),
            p("data", In),
            p("checksum", In),
            p("algo", In),
        ],
    ),
    sig(
        "update_checksum",
        &[
            p("condition", In),
            p("data", In),
            p("checksum", InOut),
            p("algo", In),
        ],
    ),
    sig(
        "verify_checksum_with_payload",
        &[
            p("condition", In),
            p("data", In),
            p("checksum", In),
            p("algo", In),
        ],
    ),
    sig(
        "update_checksum_with_payload",
        &[
            p("condition", In),
            p("data", In),
            p("checksum", InOut),
            p("algo", In),
        ],
    ),
    sig("resubmit", &[p("data", In)]),
    sig("resubmit_preserving_field_list", &[p("index", In)]),
    sig("recirculate", &[p("data", In)]),
    sig("recirculate_preserving_field_list", &[p("index", In)]),
    sig("clone", &[p("type", In), p("session", In)]),
    sig("clone3", &[p("type", In), p("session", In), p("data", In)]),
    sig(
        "clone_preserving_field_list",
        &[p("type", In), p("session", In), p("index", In)],
    ),
    sig("truncate", &[p("length", In)]),
    sig("assert", &[p("check", In)]),
    sig("assume", &[p("check", In)]),
    sig("log_msg", &[p("msg", In)]),
    sig("log_msg", &[p("msg", In), p("data", In)]),
];

/// A generic extern function: its type parameters, and which of them
/// types each parameter so typed (by parameter name). A call gives all its
/// type arguments or none (P4_16 §8.18: the rest are inferred).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Generic {
    /// Function name.
    pub name: &'static str,
    /// Its parameter count (the overload this is).
    pub arity: usize,
    /// Type parameters in order (`hash<O, T, D, M>`).
    pub type_params: &'static [&'static str],
    /// (parameter name, index into `type_params`).
    pub typed: &'static [(&'static str, usize)],
}

const CHECKSUM_TYPED: &[(&str, usize)] = &[("data", 0), ("checksum", 1)];
const DATA_T: &[(&str, usize)] = &[("data", 0)];

/// The generic extern functions of `v1model.p4` (as p4c declares them).
pub const GENERIC_FUNCTIONS: &[Generic] = &[
    Generic {
        name: "hash",
        arity: 5,
        type_params: &["O", "T", "D", "M"],
        typed: &[("result", 0), ("base", 1), ("data", 2), ("max", 3)],
    },
    Generic {
        name: "random",
        arity: 3,
        type_params: &["T"],
        typed: &[("result", 0), ("lo", 0), ("hi", 0)],
    },
    Generic {
        name: "digest",
        arity: 2,
        type_params: &["T"],
        typed: DATA_T,
    },
    Generic {
        name: "verify_checksum",
        arity: 4,
        type_params: &["T", "O"],
        typed: CHECKSUM_TYPED,
    },
    Generic {
        name: "update_checksum",
        arity: 4,
        type_params: &["T", "O"],
        typed: CHECKSUM_TYPED,
    },
    Generic {
        name: "verify_checksum_with_payload",
        arity: 4,
        type_params: &["T", "O"],
        typed: CHECKSUM_TYPED,
    },
    Generic {
        name: "update_checksum_with_payload",
        arity: 4,
        type_params: &["T", "O"],
        typed: CHECKSUM_TYPED,
    },
    Generic {
        name: "resubmit",
        arity: 1,
        type_params: &["T"],
        typed: DATA_T,
    },
    Generic {
        name: "recirculate",
        arity: 1,
        type_params: &["T"],
        typed: DATA_T,
    },
    Generic {
        name: "clone3",
        arity: 3,
        type_params: &["T"],
        typed: DATA_T,
    },
    Generic {
        name: "log_msg",
        arity: 2,
        type_params: &["T"],
        typed: DATA_T,
    },
];

/// The generic overload of extern function `name` taking `arity` arguments.
pub fn generic(name: &str, arity: usize) -> Option<&'static Generic> {
    GENERIC_FUNCTIONS
        .iter()
        .find(|g| g.name == name && g.arity == arity)
}

impl Generic {
    /// The position among the type parameters of the one typing `param`.
    pub fn type_param_of(&self, param: &str) -> Option<usize> {
        self.typed
            .iter()
            .find(|(p, _)| *p == param)
            .map(|&(_, k)| k)
    }
}

/// What a parameter of a `V1Switch` block holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockParam {
    /// `packet_in` (the parser) or `packet_out` (the deparser).
    Packet,
    /// The headers, type parameter `H`.
    Headers(Dir),
    /// The user metadata, type parameter `M`.
    Meta(Dir),
    /// `standard_metadata_t`.
    StandardMetadata(Dir),
}

/// One block type `V1Switch` takes: its name in `v1model.p4` (with its
/// parameter list, for messages) and its parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Block {
    /// The block type's name (`Ingress`).
    pub name: &'static str,
    /// As `v1model.p4` declares it, for diagnostics.
    pub declared: &'static str,
    /// Whether it is a parser (the others are controls).
    pub parser: bool,
    /// Its parameters in order.
    pub params: &'static [BlockParam],
}

/// The blocks of `package V1Switch<H, M>(...)`, in argument order.
pub const V1SWITCH: [Block; 6] = {
    use BlockParam::{Headers, Meta, Packet, StandardMetadata};
    [
        Block {
            name: "Parser",
            declared: "parser Parser<H, M>(packet_in b, out H parsedHdr, inout M meta, \
                       inout standard_metadata_t standard_metadata)",
            parser: true,
            params: &[Packet, Headers(Out), Meta(InOut), StandardMetadata(InOut)],
        },
        Block {
            name: "VerifyChecksum",
            declared: "control VerifyChecksum<H, M>(inout H hdr, inout M meta)",
            parser: false,
            params: &[Headers(InOut), Meta(InOut)],
        },
        Block {
            name: "Ingress",
            declared: "control Ingress<H, M>(inout H hdr, inout M meta, \
                       inout standard_metadata_t standard_metadata)",
            parser: false,
            params: &[Headers(InOut), Meta(InOut), StandardMetadata(InOut)],
        },
        Block {
            name: "Egress",
            declared: "control Egress<H, M>(inout H hdr, inout M meta, \
                       inout standard_metadata_t standard_metadata)",
            parser: false,
            params: &[Headers(InOut), Meta(InOut), StandardMetadata(InOut)],
        },
        Block {
            name: "ComputeChecksum",
            declared: "control ComputeChecksum<H, M>(inout H hdr, inout M meta)",
            parser: false,
            params: &[Headers(InOut), Meta(InOut)],
        },
        Block {
            name: "Deparser",
            declared: "control Deparser<H>(packet_out b, in H hdr)",
            parser: false,
            params: &[Packet, Headers(In)],
        },
    ]
};

/// Where the runtime keeps an extern object's state
/// (`p4_target::runtime::Runtime` field).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Store {
    /// `rt.registers`.
    Registers,
    /// `rt.counters`.
    Counters,
    /// `rt.meters`.
    Meters,
    /// `rt.profiles` (action profiles and selectors).
    Profiles,
}

impl Store {
    /// The `Runtime` field name.
    pub fn field(self) -> &'static str {
        match self {
            Store::Registers => "registers",
            Store::Counters => "counters",
            Store::Meters => "meters",
            Store::Profiles => "profiles",
        }
    }
}

/// An extern object type: constructor and methods.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Object {
    /// Type name.
    pub name: &'static str,
    /// Constructor parameters.
    pub ctor: &'static [Param],
    /// Methods.
    pub methods: &'static [Signature],
    /// Where instances keep their state (`None`: packets, no state).
    pub store: Option<Store>,
    /// Type parameters before and from [`INDEX_TYPE_PARAM_SINCE`]
    /// (`register<T>`, then `register<T, I>`).
    pub type_params: (&'static [&'static str], &'static [&'static str]),
}

/// The v1model.p4 versions p4c knows (`V1MODEL_VERSION`, which v1model.p4
/// stores in `__v1model_version`): the first and the latest.
pub const VERSIONS: (u128, u128) = (20180101, 20200408);

/// The first v1model version whose `counter`, `meter` and `register` take
/// their index type as a type parameter `I`; before it their methods'
/// `index` is `in bit<32>`, and P4_16 casts only untyped integers to it
/// implicitly (§8.11.2), so a `bit<8>` index is an error there.
pub const INDEX_TYPE_PARAM_SINCE: u128 = 20200408;

/// The declared type of the `index` parameter of an object's methods.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IndexTy {
    /// `in bit<32> index`.
    Bit32,
    /// `in I index`: the type argument at this position.
    TypeArg(usize),
}

impl Object {
    /// Its type parameters in v1model version `version`.
    pub fn type_params(&self, version: u128) -> &'static [&'static str] {
        if version >= INDEX_TYPE_PARAM_SINCE {
            self.type_params.1
        } else {
            self.type_params.0
        }
    }

    /// The type of the `index` parameter of its methods in `version`
    /// (`None`: no method takes one).
    pub fn index_ty(&self, version: u128) -> Option<IndexTy> {
        let has_index = self
            .methods
            .iter()
            .any(|m| m.params.iter().any(|p| p.name == "index"));
        if !has_index {
            return None;
        }
        Some(
            match self.type_params(version).iter().position(|t| *t == "I") {
                Some(k) => IndexTy::TypeArg(k),
                None => IndexTy::Bit32,
            },
        )
    }
}

/// Extern object types of `core.p4` and `v1model.p4`.
pub const OBJECTS: &[Object] = &[
    Object {
        name: "register",
        ctor: &[p("size", In)],
        methods: &[
            sig("read", &[p("result", Out), p("index", In)]),
            sig("write", &[p("index", In), p("value", In)]),
        ],
        store: Some(Store::Registers),
        type_params: (&["T"], &["T", "I"]),
    },
    Object {
        name: "counter",
        ctor: &[p("size", In), p("type", In)],
        methods: &[sig("count", &[p("index", In)])],
        store: Some(Store::Counters),
        type_params: (&[], &["I"]),
    },
    Object {
        name: "direct_counter",
        ctor: &[p("type", In)],
        methods: &[sig("count", &[])],
        store: Some(Store::Counters),
        type_params: (&[], &[]),
    },
    Object {
        name: "meter",
        ctor: &[p("size", In), p("type", In)],
        methods: &[sig("execute_meter", &[p("index", In), p("result", Out)])],
        store: Some(Store::Meters),
        type_params: (&[], &["I"]),
    },
    Object {
        name: "direct_meter",
        ctor: &[p("type", In)],
        methods: &[sig("read", &[p("result", Out)])],
        store: Some(Store::Meters),
        type_params: (&["T"], &["T"]),
    },
    Object {
        name: "action_profile",
        ctor: &[p("size", In)],
        methods: &[],
        store: Some(Store::Profiles),
        type_params: (&[], &[]),
    },
    Object {
        name: "action_selector",
        ctor: &[p("algorithm", In), p("size", In), p("outputWidth", In)],
        methods: &[],
        store: Some(Store::Profiles),
        type_params: (&[], &[]),
    },
    Object {
        name: "packet_in",
        ctor: &[],
        methods: &[
            sig("extract", &[p("hdr", Out)]),
            sig(
                "extract",
                &[
                    p("variableSizeHeader", Out),
                    p("variableFieldSizeInBits", In),
                ],
            ),
            sig("lookahead", &[]),
            sig("advance", &[p("sizeInBits", In)]),
            sig("length", &[]),
        ],
        store: None,
        type_params: (&[], &[]),
    },
    Object {
        name: "packet_out",
        ctor: &[],
        methods: &[sig("emit", &[p("hdr", In)])],
        store: None,
        type_params: (&[], &[]),
    },
];

/// The extern object type called `name`.
pub fn object(name: &str) -> Option<&'static Object> {
    OBJECTS.iter().find(|o| o.name == name)
}

/// The overloads of extern function `name`.
pub fn functions(name: &str) -> impl Iterator<Item = &'static Signature> + '_ {
    FUNCTIONS.iter().filter(move |f| f.name == name)
}

/// The overloads of method `method` of object type `object`.
pub fn methods<'a>(object: &str, method: &'a str) -> impl Iterator<Item = &'static Signature> + 'a {
    self::object(object)
        .map(|o| o.methods)
        .unwrap_or(&[])
        .iter()
        .filter(move |m| m.name == method)
}

/// Picks the overload of `candidates` that fits `n_args` arguments with
/// these `names` (all `None` for a positional call).
pub fn overload<'s>(
    candidates: impl Iterator<Item = &'s Signature>,
    n_args: usize,
    names: &[Option<&str>],
) -> Option<&'s Signature> {
    let all: Vec<&Signature> = candidates.collect();
    let named = names.iter().any(Option::is_some);
    all.iter()
        .find(|s| {
            s.params.len() == n_args
                && (!named
                    || names
                        .iter()
                        .all(|n| n.is_none_or(|n| s.params.iter().any(|p| p.name == n))))
        })
        .or_else(|| all.first())
        .copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overloads_are_told_apart_by_arity_and_names() {
        let two = overload(functions("log_msg"), 2, &[None, None]).unwrap();
        assert_eq!(two.params.len(), 2);
        let ext = overload(methods("packet_in", "extract"), 1, &[Some("hdr")]).unwrap();
        assert_eq!(ext.params[0].name, "hdr");
        assert_eq!(object("register").unwrap().store, Some(Store::Registers));
    }

    #[test]
    fn index_types_follow_the_v1model_version() {
        let old = 20180101;
        let new = INDEX_TYPE_PARAM_SINCE;
        let reg = object("register").unwrap();
        assert_eq!(reg.index_ty(old), Some(IndexTy::Bit32));
        assert_eq!(reg.index_ty(new), Some(IndexTy::TypeArg(1)));
        assert_eq!(
            object("counter").unwrap().index_ty(new),
            Some(IndexTy::TypeArg(0))
        );
        assert_eq!(object("meter").unwrap().type_params(old).len(), 0);
        assert_eq!(object("direct_counter").unwrap().index_ty(new), None);
    }

    #[test]
    fn generic_functions_match_their_signatures() {
        for g in GENERIC_FUNCTIONS {
            let sig = overload(functions(g.name), g.arity, &[]).unwrap();
            assert_eq!(sig.params.len(), g.arity, "{}", g.name);
            for (p, k) in g.typed {
                assert!(sig.params.iter().any(|q| q.name == *p), "{}.{p}", g.name);
                assert!(*k < g.type_params.len());
            }
        }
        assert_eq!(generic("hash", 5).unwrap().type_param_of("max"), Some(3));
        assert!(generic("log_msg", 1).is_none());
    }
}
