//! STF text to commands. Values stay text here: their meaning depends on
//! the width of the key or parameter they are for, which only the runner
//! knows (see [`super::value`]).
//!
//! One command per line; `#` starts a comment; keywords are
//! case-insensitive. Commands of p4c's STF (`tools/stf/stf_parser.py`,
//! `backends/bmv2/bmv2stf.py`):
//!
//! ```text
//! add TABLE [PRIORITY] KEY:VALUE... ACTION(PARAM:VALUE, ...) [= HANDLE]
//! setdefault TABLE ACTION(PARAM:VALUE, ...)
//! packet PORT HEX...
//! expect PORT [HEX-OR-*...[$]]
//! mirroring_add SESSION PORT
//! mc_mgrp_create GROUP
//! mc_node_create RID PORT...
//! mc_node_associate GROUP NODE_HANDLE
//! check_counter COUNTER(INDEX) [packets|bytes OP NUMBER]
//! check_counter DIRECT_COUNTER($HANDLE) [packets|bytes OP NUMBER]
//! wait
//! ```
//!
//! Extensions of ours (control-plane operations p4c's STF cannot express):
//!
//! ```text
//! mirroring_add SESSION PORT [cos:N] [truncate:N]
//! member PROFILE MEMBER_ID ACTION(PARAM:VALUE, ...)
//! group PROFILE GROUP_ID MEMBER_ID[:WEIGHT]...
//! add TABLE ... member(MEMBER_ID)     # entry of a table with an action profile
//! add TABLE ... group(GROUP_ID)       # entry of a table with an action selector
//! meter_set METER INDEX CIR CBURST PIR PBURST
//! direct_meter_set TABLE [PRIORITY] KEY:VALUE... rates(cir:N, cburst:N, pir:N, pburst:N)
//! register_write REGISTER INDEX VALUE
//! check_register REGISTER INDEX VALUE
//! value_set SET VALUE[&&&MASK]...     # replaces the members of a parser value set
//! check_digest DIGEST VALUE...        # the oldest unchecked digest of that type
//! ```

use super::expect::ExpectPattern;

/// An action (or `member(..)`/`group(..)`/`rates(..)`) with its arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ActionSpec {
    /// Name as written.
    pub name: String,
    /// `(param, value)` pairs; a bare value (`member(3)`) has an empty name.
    pub args: Vec<(String, String)>,
}

/// A table entry as written in `add` / `direct_meter_set`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntrySpec {
    /// Table name as written.
    pub table: String,
    /// STF priority, if given.
    pub priority: Option<u32>,
    /// `(key name, value text)` pairs.
    pub keys: Vec<(String, String)>,
    /// The action part.
    pub action: ActionSpec,
    /// `= NAME` after the action: a name for the entry, which
    /// `check_counter COUNTER($NAME)` uses to read its direct counter.
    pub handle: Option<String>,
}

/// Which cell `check_counter` reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CounterIndex {
    /// A cell of an indirect counter.
    Index(u32),
    /// The direct counter of the entry added with `= NAME`.
    Handle(String),
}

/// What `check_counter` compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CountKind {
    /// Packets.
    Packets,
    /// Bytes.
    Bytes,
}

/// Comparison of `check_counter`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpOp {
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
}

impl CmpOp {
    /// Applies the comparison.
    pub fn holds(self, a: u64, b: u64) -> bool {
        match self {
            CmpOp::Eq => a == b,
            CmpOp::Ne => a != b,
            CmpOp::Lt => a < b,
            CmpOp::Le => a <= b,
            CmpOp::Gt => a > b,
            CmpOp::Ge => a >= b,
        }
    }
}

/// One STF command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// `add`.
    Add(EntrySpec),
    /// `setdefault`.
    SetDefault {
        /// Table.
        table: String,
        /// Action.
        action: ActionSpec,
    },
    /// `packet`.
    Packet {
        /// Ingress port.
        port: u16,
        /// Bytes.
        data: Vec<u8>,
    },
    /// `expect`; `None` accepts any number of packets on the port.
    Expect {
        /// Port.
        port: u16,
        /// Expected bytes.
        pattern: Option<ExpectPattern>,
    },
    /// `wait`.
    Wait,
    /// `mirroring_add`.
    MirroringAdd {
        /// Session id.
        session: u32,
        /// Egress port.
        port: u16,
        /// Class of service.
        class_of_service: u8,
        /// Truncation.
        truncate_bytes: Option<u32>,
    },
    /// `mc_mgrp_create`.
    McMgrpCreate {
        /// Group.
        group: u16,
    },
    /// `mc_node_create`.
    McNodeCreate {
        /// Replica id.
        rid: u16,
        /// Ports.
        ports: Vec<u32>,
    },
    /// `mc_node_associate`.
    McNodeAssociate {
        /// Group.
        group: u16,
        /// Node handle.
        node: u32,
    },
    /// `check_counter`.
    CheckCounter {
        /// Counter name.
        counter: String,
        /// Index, or `$HANDLE` of an entry for a direct counter.
        index: CounterIndex,
        /// Packets or bytes (default packets).
        kind: CountKind,
        /// Comparison (default `>= 0`... i.e. only that it exists, when omitted).
        cmp: Option<(CmpOp, u64)>,
    },
    /// `member`.
    Member {
        /// Action profile.
        profile: String,
        /// Member id.
        member: u32,
        /// Action.
        action: ActionSpec,
    },
    /// `group`.
    Group {
        /// Action selector.
        profile: String,
        /// Group id.
        group: u32,
        /// `(member id, weight)`.
        members: Vec<(u32, u32)>,
    },
    /// `meter_set`.
    MeterSet {
        /// Meter.
        meter: String,
        /// Index.
        index: u32,
        /// cir, cburst, pir, pburst.
        rates: [u64; 4],
    },
    /// `direct_meter_set`: the entry's action part is `rates(...)`.
    DirectMeterSet(EntrySpec),
    /// `register_write`.
    RegisterWrite {
        /// Register.
        register: String,
        /// Index.
        index: u32,
        /// Value text.
        value: String,
    },
    /// `check_register`.
    CheckRegister {
        /// Register.
        register: String,
        /// Index.
        index: u32,
        /// Value text.
        value: String,
    },
    /// `value_set`.
    ValueSet {
        /// Value set.
        set: String,
        /// Member texts (`V` or `V&&&M`).
        members: Vec<String>,
    },
    /// `check_digest`.
    CheckDigest {
        /// Digest name.
        digest: String,
        /// Field value texts.
        values: Vec<String>,
    },
}

/// A command with its 1-based line number.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stmt {
    /// Line in the STF text.
    pub line: usize,
    /// The command.
    pub cmd: Command,
}

/// A syntax error at a line.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct ParseError {
    /// 1-based line.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// Parses a whole STF file, reporting every bad line.
pub fn parse(text: &str) -> Result<Vec<Stmt>, Vec<ParseError>> {
    let mut stmts = Vec::new();
    let mut errors = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        match parse_line(line) {
            Ok(cmd) => stmts.push(Stmt { line: i + 1, cmd }),
            Err(message) => errors.push(ParseError {
                line: i + 1,
                message,
            }),
        }
    }
    if errors.is_empty() {
        Ok(stmts)
    } else {
        Err(errors)
    }
}

fn split_word(text: &str) -> (&str, &str) {
    let text = text.trim_start();
    match text.find(char::is_whitespace) {
        Some(i) => (&text[..i], text[i..].trim_start()),
        None => (text, ""),
    }
}

fn num<T: std::str::FromStr>(text: &str, what: &str) -> Result<T, String> {
    let t = text.trim();
    let parsed = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        u128::from_str_radix(h, 16)
            .ok()
            .and_then(|v| v.to_string().parse().ok())
    } else {
        t.parse().ok()
    };
    parsed.ok_or_else(|| format!("{what}: `{t}` is not a valid number"))
}

fn parse_line(line: &str) -> Result<Command, String> {
    let (keyword, rest) = split_word(line);
    let words: Vec<&str> = rest.split_whitespace().collect();
    let want = |n: usize, usage: &str| {
        if words.len() == n {
            Ok(())
        } else {
            Err(format!("usage: {usage}"))
        }
    };
    Ok(match keyword.to_ascii_lowercase().as_str() {
        "add" => Command::Add(parse_entry(rest)?),
        "direct_meter_set" => Command::DirectMeterSet(parse_entry(rest)?),
        "setdefault" => {
            let (table, call) = split_word(rest);
            if table.is_empty() || call.is_empty() {
                return Err("usage: setdefault TABLE ACTION(PARAM:VALUE, ...)".into());
            }
            let (action, tail) = parse_call(call)?;
            if !tail.trim().is_empty() {
                return Err(format!("unexpected `{}` after the action", tail.trim()));
            }
            Command::SetDefault {
                table: table.to_string(),
                action,
            }
        }
        "packet" => {
            let (port, data) = split_word(rest);
            let port = num(port, "port")?;
            let hex: String = data.chars().filter(|c| !c.is_whitespace()).collect();
            // Two digits a byte; an odd last digit is a byte of its own
            // (`abc` is ab 0c), as p4c's BMv2 STF runner reads it, and some
            // of p4c's STF files end that way.
            let mut bytes = Vec::with_capacity(hex.len().div_ceil(2));
            for i in (0..hex.len()).step_by(2) {
                let digits = hex
                    .get(i..(i + 2).min(hex.len()))
                    .ok_or("packet data must be ASCII hex")?;
                bytes.push(
                    u8::from_str_radix(digits, 16)
                        .map_err(|_| format!("`{digits}` is not a hex byte"))?,
                );
            }
            Command::Packet { port, data: bytes }
        }
        "expect" => {
            let (port, data) = split_word(rest);
            let port = num(port, "port")?;
            let pattern = if data.trim().is_empty() {
                None
            } else {
                Some(ExpectPattern::parse(data)?)
            };
            Command::Expect { port, pattern }
        }
        "wait" => {
            want(0, "wait")?;
            Command::Wait
        }
        "mirroring_add" => {
            if words.len() < 2 {
                return Err("usage: mirroring_add SESSION PORT [cos:N] [truncate:N]".into());
            }
            let mut class_of_service = 0;
            let mut truncate_bytes = None;
            for opt in &words[2..] {
                match opt.split_once(':') {
                    Some(("cos", v)) => class_of_service = num(v, "cos")?,
                    Some(("truncate", v)) => truncate_bytes = Some(num(v, "truncate")?),
                    _ => return Err(format!("unknown mirroring option `{opt}`")),
                }
            }
            Command::MirroringAdd {
                session: num(words[0], "session")?,
                port: num(words[1], "port")?,
                class_of_service,
                truncate_bytes,
            }
        }
        "mc_mgrp_create" => {
            want(1, "mc_mgrp_create GROUP")?;
            Command::McMgrpCreate {
                group: num(words[0], "group")?,
            }
        }
        "mc_node_create" => {
            if words.is_empty() {
                return Err("usage: mc_node_create RID PORT...".into());
            }
            Command::McNodeCreate {
                rid: num(words[0], "rid")?,
                ports: words[1..]
                    .iter()
                    .map(|p| num(p, "port"))
                    .collect::<Result<_, _>>()?,
            }
        }
        "mc_node_associate" => {
            want(2, "mc_node_associate GROUP NODE_HANDLE")?;
            Command::McNodeAssociate {
                group: num(words[0], "group")?,
                node: num(words[1], "node handle")?,
            }
        }
        "check_counter" => {
            let usage = "usage: check_counter COUNTER(INDEX or $HANDLE) [packets|bytes OP NUMBER]";
            let (call, tail) = parse_call(rest)?;
            let index = match call.args.as_slice() {
                [(name, v)] if name.is_empty() => match v.strip_prefix('$') {
                    Some(handle) if !handle.is_empty() => CounterIndex::Handle(handle.to_string()),
                    _ => CounterIndex::Index(num(v, "counter index")?),
                },
                _ => return Err(usage.into()),
            };
            let tail: Vec<&str> = tail.split_whitespace().collect();
            let (kind, cmp) = match tail.as_slice() {
                [] => (CountKind::Packets, None),
                [kind, op, value] => {
                    let kind = match kind.to_ascii_lowercase().as_str() {
                        "packets" => CountKind::Packets,
                        "bytes" => CountKind::Bytes,
                        _ => return Err(usage.into()),
                    };
                    let op = match *op {
                        "==" => CmpOp::Eq,
                        "!=" => CmpOp::Ne,
                        "<" => CmpOp::Lt,
                        "<=" => CmpOp::Le,
                        ">" => CmpOp::Gt,
                        ">=" => CmpOp::Ge,
                        _ => return Err(format!("unknown comparison `{op}`")),
                    };
                    (kind, Some((op, num(value, "count")?)))
                }
                _ => return Err(usage.into()),
            };
            Command::CheckCounter {
                counter: call.name,
                index,
                kind,
                cmp,
            }
        }
        "member" => {
            let (profile, rest) = split_word(rest);
            let (member, call) = split_word(rest);
            let (action, tail) = parse_call(call)?;
            if profile.is_empty() || !tail.trim().is_empty() {
                return Err("usage: member PROFILE MEMBER_ID ACTION(PARAM:VALUE, ...)".into());
            }
            Command::Member {
                profile: profile.to_string(),
                member: num(member, "member id")?,
                action,
            }
        }
        "group" => {
            if words.len() < 2 {
                return Err("usage: group PROFILE GROUP_ID MEMBER_ID[:WEIGHT]...".into());
            }
            let mut members = Vec::new();
            for m in &words[2..] {
                members.push(match m.split_once(':') {
                    Some((id, w)) => (num(id, "member id")?, num(w, "weight")?),
                    None => (num(m, "member id")?, 1),
                });
            }
            Command::Group {
                profile: words[0].to_string(),
                group: num(words[1], "group id")?,
                members,
            }
        }
        "meter_set" => {
            want(6, "meter_set METER INDEX CIR CBURST PIR PBURST")?;
            let mut rates = [0u64; 4];
            for (r, w) in rates.iter_mut().zip(&words[2..]) {
                *r = num(w, "rate")?;
            }
            Command::MeterSet {
                meter: words[0].to_string(),
                index: num(words[1], "index")?,
                rates,
            }
        }
        "register_write" | "check_register" => {
            want(3, &format!("{keyword} REGISTER INDEX VALUE"))?;
            let (register, index, value) = (
                words[0].to_string(),
                num(words[1], "index")?,
                words[2].to_string(),
            );
            if keyword.eq_ignore_ascii_case("register_write") {
                Command::RegisterWrite {
                    register,
                    index,
                    value,
                }
            } else {
                Command::CheckRegister {
                    register,
                    index,
                    value,
                }
            }
        }
        "value_set" => {
            if words.is_empty() {
                return Err("usage: value_set SET VALUE[&&&MASK]...".into());
            }
            Command::ValueSet {
                set: words[0].to_string(),
                members: words[1..].iter().map(|s| s.to_string()).collect(),
            }
        }
        "check_digest" => {
            if words.is_empty() {
                return Err("usage: check_digest DIGEST VALUE...".into());
            }
            Command::CheckDigest {
                digest: words[0].to_string(),
                values: words[1..].iter().map(|s| s.to_string()).collect(),
            }
        }
        other => return Err(format!("unknown command `{other}`")),
    })
}

/// Parses `NAME(ARG, ...)` at the start of `text`; returns the rest after `)`.
fn parse_call(text: &str) -> Result<(ActionSpec, &str), String> {
    let text = text.trim_start();
    let open = text
        .find('(')
        .ok_or_else(|| format!("expected `NAME(...)`, found `{text}`"))?;
    let close = text[open..]
        .find(')')
        .map(|i| i + open)
        .ok_or("missing `)`")?;
    let name = text[..open].trim();
    if name.is_empty() || name.contains(char::is_whitespace) {
        return Err(format!("bad action name `{name}`"));
    }
    let mut args = Vec::new();
    for arg in text[open + 1..close].split(',') {
        let arg = arg.trim();
        if arg.is_empty() {
            continue;
        }
        match arg.split_once(':') {
            Some((k, v)) => args.push((k.trim().to_string(), v.trim().to_string())),
            None => args.push((String::new(), arg.to_string())),
        }
    }
    Ok((
        ActionSpec {
            name: name.to_string(),
            args,
        },
        &text[close + 1..],
    ))
}

/// `TABLE [PRIORITY] KEY:VALUE... ACTION(...) [= HANDLE]`.
fn parse_entry(text: &str) -> Result<EntrySpec, String> {
    let (table, mut rest) = split_word(text);
    if table.is_empty() {
        return Err("missing table name".into());
    }
    let open = rest.find('(').ok_or("missing action `NAME(...)`")?;
    // The action name is the last word before `(`.
    let head = &rest[..open];
    let action_start = head.rfind(char::is_whitespace).map_or(0, |i| i + 1);
    let before = &rest[..action_start];
    let (action, tail) = parse_call(&rest[action_start..])?;
    let tail = tail.trim();
    let handle = match tail.strip_prefix('=') {
        Some(h) if !h.trim().is_empty() && !h.trim().contains(char::is_whitespace) => {
            Some(h.trim().to_string())
        }
        Some(_) => return Err("`=` must be followed by one handle name".into()),
        None if tail.is_empty() => None,
        None => return Err(format!("unexpected `{tail}` after the action")),
    };
    rest = before;
    let mut priority = None;
    let mut keys = Vec::new();
    for (i, word) in rest.split_whitespace().enumerate() {
        match word.split_once(':') {
            Some((k, v)) if !k.is_empty() && !v.is_empty() => {
                keys.push((k.to_string(), v.to_string()))
            }
            None if i == 0 && word.bytes().all(|b| b.is_ascii_digit()) => {
                priority = Some(num(word, "priority")?);
            }
            _ => return Err(format!("expected KEY:VALUE, found `{word}`")),
        }
    }
    Ok(EntrySpec {
        table: table.to_string(),
        priority,
        keys,
        action,
        handle,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(text: &str) -> Command {
        let mut v = parse(text).unwrap();
        assert_eq!(v.len(), 1);
        v.remove(0).cmd
    }

    #[test]
    fn add_with_priority_keys_and_action() {
        let c = one("add test1 503 data.f1:0x****0202 ingress.setb1(val:7, port:3) = A");
        assert_eq!(
            c,
            Command::Add(EntrySpec {
                table: "test1".into(),
                priority: Some(503),
                keys: vec![("data.f1".into(), "0x****0202".into())],
                action: ActionSpec {
                    name: "ingress.setb1".into(),
                    args: vec![("val".into(), "7".into()), ("port".into(), "3".into())],
                },
                handle: Some("A".into()),
            })
        );
    }

    #[test]
    fn add_keeps_colons_inside_values() {
        let Command::Add(e) = one("ADD dmac hdr.ethernet.dstAddr:00:11:22:33:44:55 fwd(port:1)")
        else {
            panic!()
        };
        assert_eq!(e.priority, None);
        assert_eq!(
            e.keys,
            vec![("hdr.ethernet.dstAddr".into(), "00:11:22:33:44:55".into())]
        );
        let Command::Add(e) = one("add t k:10.0.0.0/8 a()") else {
            panic!()
        };
        assert_eq!(e.keys[0].1, "10.0.0.0/8");
        assert!(e.action.args.is_empty());
    }

    #[test]
    fn packets_and_expectations() {
        let c = one("packet 2 0a0b 0C0d   # comment");
        assert_eq!(
            c,
            Command::Packet {
                port: 2,
                data: vec![0x0a, 0x0b, 0x0c, 0x0d]
            }
        );
        assert_eq!(
            one("packet 0 ab c"),
            Command::Packet {
                port: 0,
                data: vec![0xab, 0x0c]
            },
            "an odd last digit is a byte of its own, as p4c's runner reads it"
        );
        assert!(parse("packet 0 ab g").is_err());
        let Command::Expect {
            port,
            pattern: Some(p),
        } = one("expect 3 0a ** 0c $")
        else {
            panic!()
        };
        assert_eq!(port, 3);
        assert!(p.exact_len);
        assert_eq!(p.nibbles.len(), 6);
        assert_eq!(
            one("expect 4"),
            Command::Expect {
                port: 4,
                pattern: None
            }
        );
    }

    #[test]
    fn replication_commands() {
        let text = "mc_mgrp_create 1\nmc_node_create 0 1 2 3\nmc_node_associate 1 0\nmirroring_add 5 7 truncate:64";
        let v = parse(text).unwrap();
        assert_eq!(v[0].cmd, Command::McMgrpCreate { group: 1 });
        assert_eq!(
            v[1].cmd,
            Command::McNodeCreate {
                rid: 0,
                ports: vec![1, 2, 3]
            }
        );
        assert_eq!(v[2].cmd, Command::McNodeAssociate { group: 1, node: 0 });
        assert_eq!(
            v[3].cmd,
            Command::MirroringAdd {
                session: 5,
                port: 7,
                class_of_service: 0,
                truncate_bytes: Some(64)
            }
        );
        assert_eq!(v[3].line, 4);
    }

    #[test]
    fn counters_and_extensions() {
        assert_eq!(
            one("check_counter ingress.cnt(3) bytes == 128"),
            Command::CheckCounter {
                counter: "ingress.cnt".into(),
                index: CounterIndex::Index(3),
                kind: CountKind::Bytes,
                cmp: Some((CmpOp::Eq, 128)),
            }
        );
        assert_eq!(
            one("group sel 7 1 2:3"),
            Command::Group {
                profile: "sel".into(),
                group: 7,
                members: vec![(1, 1), (2, 3)]
            }
        );
        let Command::Add(e) = one("add ecmp dst:10.0.0.1 group(7)") else {
            panic!()
        };
        assert_eq!(e.action.name, "group");
        assert_eq!(e.action.args, vec![(String::new(), "7".into())]);
    }

    #[test]
    fn every_bad_line_is_reported() {
        let errs = parse("packet 1 abx\nfrobnicate\nadd t k:1\nexpect x 00\nwait").unwrap_err();
        let lines: Vec<usize> = errs.iter().map(|e| e.line).collect();
        assert_eq!(lines, vec![1, 2, 3, 4]);
        assert!(errs[1].message.contains("unknown command"));
    }
}
