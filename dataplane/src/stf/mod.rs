//! The STF runner: executes p4c's "simple test framework" files (table
//! entries, packets in, packets expected out) against a compiled
//! [`Pipeline`] running in the production switch core ([`Switch`]) on
//! ideal output queues ([`SwitchConfig::ideal`]), so that an STF test
//! checks what the daemon runs.
//!
//! Spec: the STF format of p4c's test suites (`tools/stf/stf_parser.py`,
//! `backends/bmv2/bmv2stf.py`); our extensions are listed in [`parse`].
//!
//! Execution contract:
//! - The switch has ports 0..=510 and no CPU port (as bmv2 under p4c's
//!   runner), a FIFO queue per port that never delays or drops, and no MAC
//!   layer: every packet reaches the parser.
//! - Commands run in file order. Packet `k` (counting from 1) arrives at
//!   `k` µs on the switch clock (meters see 1 µs between packets); the
//!   runner then drains every port at that instant (recirculations and
//!   clones included) and collects digests, before the next command.
//! - Names of tables, actions, counters, meters, registers, value sets and
//!   digests resolve by full P4Info name or unique dotted suffix; key fields
//!   by their P4Info name (`hdr.ipv4.dstAddr`) or a unique dotted suffix
//!   (`ipv4.dstAddr`, `dstAddr`), with p4c's `stack$0` spelling of
//!   `stack[0]`, and `hdr.valid` or a bare `hdr` for `hdr.$valid$`/`hdr.isValid()`.
//! - A key left out of `add` is a wildcard for ternary, LPM, range and
//!   optional keys (as p4c's runner does) and an error for exact keys.
//! - Priorities: p4c's runner hands bmv2 `10000 - priority`, and bmv2 lets
//!   the *smaller* number win, so in STF the **larger** priority wins, as in
//!   P4Runtime (p4c's `ternary2-bmv2.stf` depends on it). An STF priority
//!   `p` becomes runtime priority `p + 1` (runtime priorities must be > 0);
//!   an entry without one gets 1. Tables with only exact/LPM keys ignore it.
//! - Expectations, as p4c's runner checks them: the ports that appear in
//!   any `packet` or `expect` line are the switch's interfaces. Packets sent
//!   to other ports are lost (reported as notes, not failures). On every
//!   interface, the packets emitted must match the `expect` lines for that
//!   port one to one, in order: same count, and each packet matches its
//!   pattern (see [`expect`]); when the counts differ, both lists are
//!   reported instead of pairing packets. `expect PORT` without data
//!   accepts any number of packets on that port for the whole run. p4c
//!   checks once at the end; we also check at each `wait`, comparing what
//!   was emitted and expected since the previous check, so a test can
//!   separate phases.
//! - A control-plane error (unknown name, bad value, refused write) is a
//!   failure of the test; execution continues so every problem is reported.

pub mod expect;
pub mod parse;
pub mod value;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use p4_target::arch::{CloneSession, McReplica, Pre};
use p4_target::externs::MeterConfig;
use p4_target::info::{ActionInfo, KeyInfo, MatchKind, ProgramInfo, TableInfo, resolve_name};
use p4_target::pipeline::Pipeline;
use p4_target::runtime::{ActionCall, EntryAction, FieldMatch, Runtime, RuntimeApi, TableEntry};

use crate::switch::{Switch, SwitchConfig};
use crate::time::Instant;
use expect::{ExpectPattern, hex};
use parse::{ActionSpec, Command, CountKind, CounterIndex, EntrySpec, Stmt};
use value::{parse_masked, parse_value};

/// The outcome of one STF run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StfReport {
    /// No failure.
    pub passed: bool,
    /// Every failure, each naming its STF line where there is one.
    pub failures: Vec<String>,
    /// Information that is not a failure (packets on ports without an interface).
    pub notes: Vec<String>,
    /// Packets sent into the switch.
    pub packets_in: usize,
    /// Packets the switch emitted (on any port).
    pub packets_out: usize,
    /// Each packet's trace as text (one block per copy), from
    /// [`run_traced`]; empty otherwise.
    pub traces: Vec<String>,
}

impl fmt::Display for StfReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{}: {} packets in, {} out",
            if self.passed { "PASS" } else { "FAIL" },
            self.packets_in,
            self.packets_out
        )?;
        for m in &self.failures {
            writeln!(f, "*** {m}")?;
        }
        for n in &self.notes {
            writeln!(f, "note: {n}")?;
        }
        Ok(())
    }
}

/// Ports of the STF switch: 0..=510, every port a v1model program can name.
pub const STF_PORTS: usize = 511;

/// The switch [`run`] uses: [`SwitchConfig::ideal`] with [`STF_PORTS`]
/// ports, running `pipeline`.
pub fn stf_switch<P: Pipeline>(pipeline: P) -> Switch<P> {
    Switch::new(pipeline, SwitchConfig::ideal(STF_PORTS), Instant::ZERO)
        .expect("the ideal switch configuration is valid")
}

/// Runs `stf_text` against a fresh switch running `pipeline`.
pub fn run<P: Pipeline>(pipeline: P, stf_text: &str) -> StfReport {
    let mut sw = stf_switch(pipeline);
    run_on_switch(&mut sw, stf_text)
}

/// [`run`] with every packet traced: the report's `traces` holds one
/// indented text block per packet copy, in the order they finished
/// (`p4-to-rust stf --trace CASE`).
pub fn run_traced<P: Pipeline>(pipeline: P, stf_text: &str) -> StfReport {
    let mut sw = stf_switch(pipeline);
    sw.handle_trace_request(Some(crate::switch::TraceRequest {
        sample_one_in: 1,
        ..Default::default()
    }));
    let mut report = run_on_switch(&mut sw, stf_text);
    while let Some(t) = sw.poll_trace() {
        report.traces.push(t.to_string());
    }
    let lost = sw.trace_stats().dropped;
    if lost > 0 {
        report.notes.push(format!(
            "{lost} traces dropped (more than {} packets)",
            crate::switch::MAX_TRACES
        ));
    }
    report
}

/// Runs `stf_text` against an existing switch (its configuration and
/// state are kept; its clock must not have passed 1 µs).
pub fn run_on_switch<P: Pipeline>(sw: &mut Switch<P>, stf_text: &str) -> StfReport {
    run_on_target(sw, stf_text)
}

fn run_on_target(sw: &mut dyn Target, stf_text: &str) -> StfReport {
    let stmts = match parse::parse(stf_text) {
        Ok(s) => s,
        Err(errors) => {
            return StfReport {
                passed: false,
                failures: errors.iter().map(|e| format!("syntax: {e}")).collect(),
                ..Default::default()
            };
        }
    };
    let mut runner = Runner::new(sw, &stmts);
    for stmt in &stmts {
        runner.exec(stmt);
    }
    runner.check_segment("end of test");
    if let Err(e) = runner.sw.conservation() {
        runner.report.failures.push(format!("end of test: {e}"));
    }
    let r = runner.report;
    StfReport {
        passed: r.failures.is_empty(),
        ..r
    }
}

/// What the runner needs from the switch. The runner holds it as a trait
/// object, so that its control-plane code is compiled once rather than
/// once per program (a `p4-to-rust stf` harness links dozens).
trait Target {
    fn info(&self) -> &'static ProgramInfo;
    fn runtime(&self) -> &Runtime;
    fn runtime_mut(&mut self) -> &mut Runtime;
    fn pre_mut(&mut self) -> &mut Pre;
    /// The switch's conservation law ([`Switch::conservation`]).
    fn conservation(&self) -> Result<(), crate::switch::Imbalance>;
    /// Sends `data` in on `port` at `now`, then hands every frame the
    /// switch sends to `emit` and appends every digest to `digests`.
    fn packet(
        &mut self,
        port: u16,
        data: &[u8],
        now: Instant,
        emit: &mut dyn FnMut(u16, &[u8]),
        digests: &mut Vec<(u32, Vec<u128>)>,
    );
}

impl<P: Pipeline> Target for Switch<P> {
    fn info(&self) -> &'static ProgramInfo {
        self.pipeline().info()
    }
    fn runtime(&self) -> &Runtime {
        self.pipeline().runtime()
    }
    fn runtime_mut(&mut self) -> &mut Runtime {
        self.pipeline_mut().runtime_mut()
    }
    fn pre_mut(&mut self) -> &mut Pre {
        Switch::pre_mut(self)
    }
    fn conservation(&self) -> Result<(), crate::switch::Imbalance> {
        Switch::conservation(self)
    }
    fn packet(
        &mut self,
        port: u16,
        data: &[u8],
        now: Instant,
        emit: &mut dyn FnMut(u16, &[u8]),
        digests: &mut Vec<(u32, Vec<u128>)>,
    ) {
        self.handle_frame(port, data, now);
        self.drain(now, emit);
        while let Some(d) = self.poll_digest() {
            digests.push((d.id, d.values));
        }
    }
}

/// Per-port expectations and output since the last check.
#[derive(Default)]
struct PortState {
    expected: Vec<(usize, ExpectPattern)>,
    any: bool,
    received: Vec<Vec<u8>>,
}

struct Runner<'a> {
    sw: &'a mut dyn Target,
    info: &'static ProgramInfo,
    ports: BTreeMap<u16, PortState>,
    digests: Vec<(u32, Vec<u128>)>,
    /// Entries named with `= NAME`: table id, matches, runtime priority.
    handles: BTreeMap<String, (u32, Vec<Option<FieldMatch>>, i32)>,
    packets: u64,
    report: StfReport,
}

/// A control-plane command failure (the runner adds the line number).
type CmdResult = Result<(), String>;

impl<'a> Runner<'a> {
    fn new(sw: &'a mut dyn Target, stmts: &[Stmt]) -> Self {
        let mut interfaces = BTreeSet::new();
        for s in stmts {
            match s.cmd {
                Command::Packet { port, .. } | Command::Expect { port, .. } => {
                    interfaces.insert(port);
                }
                _ => {}
            }
        }
        let info = sw.info();
        Runner {
            sw,
            info,
            ports: interfaces
                .into_iter()
                .map(|p| (p, PortState::default()))
                .collect(),
            digests: Vec::new(),
            handles: BTreeMap::new(),
            packets: 0,
            report: StfReport::default(),
        }
    }

    fn fail(&mut self, line: usize, message: impl fmt::Display) {
        self.report.failures.push(format!("line {line}: {message}"));
    }

    fn exec(&mut self, stmt: &Stmt) {
        let result = match &stmt.cmd {
            Command::Packet { port, data } => {
                self.packets += 1;
                self.report.packets_in += 1;
                let now = Instant::from_micros(self.packets);
                let (ports, report) = (&mut self.ports, &mut self.report);
                let mut emit = |p: u16, bytes: &[u8]| {
                    report.packets_out += 1;
                    match ports.get_mut(&p) {
                        Some(state) => state.received.push(bytes.to_vec()),
                        None => report.notes.push(format!(
                            "line {}: packet emitted on port {p}, which no packet/expect line names (lost, as in bmv2): {}",
                            stmt.line,
                            hex(bytes)
                        )),
                    }
                };
                self.sw
                    .packet(*port, data, now, &mut emit, &mut self.digests);
                Ok(())
            }
            Command::Expect { port, pattern } => {
                let state = self.ports.entry(*port).or_default();
                match pattern {
                    Some(p) => state.expected.push((stmt.line, p.clone())),
                    None => state.any = true,
                }
                Ok(())
            }
            Command::Wait => {
                self.check_segment(&format!("wait at line {}", stmt.line));
                Ok(())
            }
            Command::Add(entry) => self.add(entry),
            Command::SetDefault { table, action } => self.set_default(table, action),
            Command::MirroringAdd {
                session,
                port,
                class_of_service,
                truncate_bytes,
            } => self
                .sw
                .pre_mut()
                .mirroring_add(
                    *session,
                    CloneSession {
                        replicas: vec![McReplica {
                            port: *port,
                            rid: 0,
                        }],
                        class_of_service: *class_of_service,
                        truncate_bytes: *truncate_bytes,
                    },
                )
                .map_err(|e| e.to_string()),
            Command::McMgrpCreate { group } => self
                .sw
                .pre_mut()
                .mc_mgrp_create(*group)
                .map_err(|e| e.to_string()),
            Command::McNodeCreate { rid, ports } => self
                .sw
                .pre_mut()
                .mc_node_create(*rid, ports)
                .map(|_| ())
                .map_err(|e| e.to_string()),
            Command::McNodeAssociate { group, node } => self
                .sw
                .pre_mut()
                .mc_node_associate(*group, *node)
                .map_err(|e| e.to_string()),
            Command::CheckCounter {
                counter,
                index,
                kind,
                cmp,
            } => self.check_counter(counter, index, *kind, *cmp),
            Command::Member {
                profile,
                member,
                action,
            } => self.member(profile, *member, action),
            Command::Group {
                profile,
                group,
                members,
            } => self.group(profile, *group, members),
            Command::MeterSet {
                meter,
                index,
                rates,
            } => self.meter_set(meter, *index, rates),
            Command::DirectMeterSet(entry) => self.direct_meter_set(entry),
            Command::RegisterWrite {
                register,
                index,
                value,
            } => self.register_write(register, *index, value),
            Command::CheckRegister {
                register,
                index,
                value,
            } => self.check_register(register, *index, value),
            Command::ValueSet { set, members } => self.value_set(set, members),
            Command::CheckDigest { digest, values } => self.check_digest(digest, values),
        };
        if let Err(message) = result {
            self.fail(stmt.line, message);
        }
    }

    /// Compares what each interface emitted since the last check with what
    /// was expected, then starts a new segment.
    fn check_segment(&mut self, when: &str) {
        let mut failures = Vec::new();
        for (port, state) in self.ports.iter_mut() {
            let expected = std::mem::take(&mut state.expected);
            let received = std::mem::take(&mut state.received);
            if state.any {
                if !expected.is_empty() {
                    failures.push(format!(
                        "{when}: port {port} has both `expect {port}` without data and expected packets"
                    ));
                }
                continue;
            }
            if expected.len() == received.len() {
                for (i, ((line, pattern), got)) in expected.iter().zip(&received).enumerate() {
                    if let Err(why) = pattern.compare(got) {
                        failures.push(format!(
                            "line {line}: packet #{} on port {port} {why}",
                            i + 1
                        ));
                    }
                }
                continue;
            }
            // As p4c's runner: a count mismatch is reported with both
            // lists, without pairing packets that may not correspond.
            let mut m = format!(
                "{when}: expected {} packets on port {port}, got {}",
                expected.len(),
                received.len()
            );
            for (i, (line, p)) in expected.iter().enumerate() {
                m.push_str(&format!(
                    "\n  expected #{} (line {line}): {}",
                    i + 1,
                    p.render()
                ));
            }
            for (i, r) in received.iter().enumerate() {
                m.push_str(&format!("\n  received #{}: {}", i + 1, hex(r)));
            }
            failures.push(m);
        }
        self.report.failures.extend(failures);
    }

    // ----- name resolution -------------------------------------------------

    fn table(&self, name: &str) -> Result<&'static TableInfo, String> {
        self.info
            .table_by_name(name)
            .ok_or_else(|| not_found("table", name, self.info.tables.iter().map(|t| t.name)))
    }

    fn table_action(
        &self,
        table: &'static TableInfo,
        name: &str,
    ) -> Result<&'static ActionInfo, String> {
        let actions: Vec<&'static ActionInfo> = table
            .actions
            .iter()
            .filter_map(|a| self.info.action(a.id))
            .collect();
        resolve_name(actions.iter(), name, |a| a.name)
            .copied()
            .ok_or_else(|| {
                not_found(
                    &format!("action of {}", table.name),
                    name,
                    actions.iter().map(|a| a.name),
                )
            })
    }

    fn action_call(
        &self,
        action: &'static ActionInfo,
        spec: &ActionSpec,
    ) -> Result<ActionCall, String> {
        let mut params = Vec::with_capacity(action.params.len());
        for p in action.params {
            let (_, text) = spec
                .args
                .iter()
                .find(|(k, _)| k == p.name)
                .ok_or_else(|| format!("{}: missing parameter `{}`", action.name, p.name))?;
            params.push(
                parse_value(text, p.bitwidth)
                    .map_err(|e| format!("{}.{}: {e}", action.name, p.name))?,
            );
        }
        if let Some((k, _)) = spec
            .args
            .iter()
            .find(|(k, _)| !action.params.iter().any(|p| p.name == k))
        {
            return Err(format!("{} has no parameter `{k}`", action.name));
        }
        Ok(ActionCall::new(action.id, &params))
    }

    /// Match list and runtime priority of an entry.
    fn matches(
        &self,
        table: &'static TableInfo,
        spec: &EntrySpec,
    ) -> Result<(Vec<Option<FieldMatch>>, i32), String> {
        let mut matches: Vec<Option<Option<FieldMatch>>> = vec![None; table.keys.len()];
        for (name, text) in &spec.keys {
            let idx = key_index(table, name)?;
            let key = &table.keys[idx];
            if matches[idx].is_some() {
                return Err(format!("key `{}` given twice", key.name));
            }
            matches[idx] =
                Some(field_match(key, text).map_err(|e| format!("key `{}`: {e}", key.name))?);
        }
        let mut out = Vec::with_capacity(matches.len());
        for (key, m) in table.keys.iter().zip(matches) {
            match m {
                Some(m) => out.push(m),
                None if key.kind == MatchKind::Exact => {
                    return Err(format!("missing value for exact key `{}`", key.name));
                }
                None => out.push(None),
            }
        }
        let needs_priority = table.keys.iter().any(|k| {
            matches!(
                k.kind,
                MatchKind::Ternary | MatchKind::Range | MatchKind::Optional
            )
        });
        let priority = if needs_priority {
            i32::try_from(spec.priority.unwrap_or(0) as i64 + 1)
                .map_err(|_| "priority too large".to_string())?
        } else {
            0
        };
        Ok((out, priority))
    }

    // ----- commands --------------------------------------------------------

    fn add(&mut self, spec: &EntrySpec) -> CmdResult {
        let table = self.table(&spec.table)?;
        let (matches, priority) = self.matches(table, spec)?;
        let action = match (spec.action.name.as_str(), table.implementation) {
            ("member" | "group", Some(_)) => {
                let id = bare_arg(&spec.action)?;
                if spec.action.name == "member" {
                    EntryAction::Member(id)
                } else {
                    EntryAction::Group(id)
                }
            }
            _ => {
                let a = self.table_action(table, &spec.action.name)?;
                EntryAction::Direct(self.action_call(a, &spec.action)?)
            }
        };
        let entry = TableEntry {
            matches: matches.clone(),
            priority,
            action,
            metadata: Vec::new(),
        };
        self.sw
            .runtime_mut()
            .table_insert(table.id, entry)
            .map_err(|e| format!("add to {}: {e}", table.name))?;
        if let Some(h) = &spec.handle {
            self.handles
                .insert(h.clone(), (table.id, matches, priority));
        }
        Ok(())
    }

    fn set_default(&mut self, table: &str, spec: &ActionSpec) -> CmdResult {
        let table = self.table(table)?;
        let a = self.table_action(table, &spec.name)?;
        let call = self.action_call(a, spec)?;
        self.sw
            .runtime_mut()
            .table_set_default(table.id, call)
            .map_err(|e| format!("setdefault {}: {e}", table.name))
    }

    fn profile_id(&self, name: &str) -> Result<u32, String> {
        resolve_name(self.info.action_profiles.iter(), name, |p| p.name)
            .map(|p| p.id)
            .ok_or_else(|| {
                not_found(
                    "action profile",
                    name,
                    self.info.action_profiles.iter().map(|p| p.name),
                )
            })
    }

    fn member(&mut self, profile: &str, member: u32, spec: &ActionSpec) -> CmdResult {
        let pid = self.profile_id(profile)?;
        let table_id = self
            .info
            .action_profiles
            .iter()
            .find(|p| p.id == pid)
            .and_then(|p| p.table_ids.first().copied());
        let table = table_id
            .and_then(|id| self.info.table(id))
            .ok_or_else(|| format!("action profile {profile} is used by no table"))?;
        let a = self.table_action(table, &spec.name)?;
        let call = self.action_call(a, spec)?;
        self.sw
            .runtime_mut()
            .member_write(pid, member, call, false)
            .map_err(|e| format!("member {member}: {e}"))
    }

    fn group(&mut self, profile: &str, group: u32, members: &[(u32, u32)]) -> CmdResult {
        let pid = self.profile_id(profile)?;
        self.sw
            .runtime_mut()
            .group_write(pid, group, members, false)
            .map_err(|e| format!("group {group}: {e}"))
    }

    fn check_counter(
        &mut self,
        name: &str,
        index: &CounterIndex,
        kind: CountKind,
        cmp: Option<(parse::CmpOp, u64)>,
    ) -> CmdResult {
        let c = resolve_name(self.info.counters.iter(), name, |c| c.name)
            .ok_or_else(|| not_found("counter", name, self.info.counters.iter().map(|c| c.name)))?;
        let rt = self.sw.runtime();
        let (data, cell) = match (index, c.direct_table) {
            (CounterIndex::Index(i), None) => (
                rt.counter_read(c.id, *i).map_err(|e| e.to_string())?,
                i.to_string(),
            ),
            (CounterIndex::Handle(h), Some(table)) => {
                let (table_id, matches, priority) = self
                    .handles
                    .get(h)
                    .ok_or_else(|| format!("no entry was added with `= {h}`"))?;
                if *table_id != table {
                    return Err(format!(
                        "entry `{h}` is not in the table of direct counter {}",
                        c.name
                    ));
                }
                let data = rt
                    .direct_counter_read(table, matches, *priority)
                    .map_err(|e| e.to_string())?;
                (data, format!("${h}"))
            }
            (CounterIndex::Index(_), Some(_)) => {
                return Err(format!(
                    "{} is a direct counter: name an entry with `($HANDLE)`",
                    c.name
                ));
            }
            (CounterIndex::Handle(_), None) => {
                return Err(format!("{} is an indirect counter: give an index", c.name));
            }
        };
        let value = match kind {
            CountKind::Packets => data.packets,
            CountKind::Bytes => data.bytes,
        };
        match cmp {
            Some((op, want)) if !op.holds(value, want) => Err(format!(
                "check_counter {}({cell}): {} is {value}, expected {op:?} {want}",
                c.name,
                if kind == CountKind::Packets {
                    "packets"
                } else {
                    "bytes"
                }
            )),
            _ => Ok(()),
        }
    }

    fn meter_set(&mut self, name: &str, index: u32, rates: &[u64; 4]) -> CmdResult {
        let m = resolve_name(self.info.meters.iter(), name, |m| m.name)
            .ok_or_else(|| not_found("meter", name, self.info.meters.iter().map(|m| m.name)))?;
        let cfg = MeterConfig {
            cir: rates[0],
            cburst: rates[1],
            pir: rates[2],
            pburst: rates[3],
        };
        self.sw
            .runtime_mut()
            .meter_set(m.id, index, Some(cfg))
            .map_err(|e| e.to_string())
    }

    fn direct_meter_set(&mut self, spec: &EntrySpec) -> CmdResult {
        let table = self.table(&spec.table)?;
        let (matches, priority) = self.matches(table, spec)?;
        let rate = |k: &str| -> Result<u64, String> {
            let (_, v) = spec
                .action
                .args
                .iter()
                .find(|(n, _)| n == k)
                .ok_or_else(|| format!("rates(...) needs `{k}`"))?;
            parse_value(v, 64)
                .map(|v| v as u64)
                .map_err(|e| e.to_string())
        };
        if spec.action.name != "rates" {
            return Err(
                "direct_meter_set ends with rates(cir:N, cburst:N, pir:N, pburst:N)".into(),
            );
        }
        let cfg = MeterConfig {
            cir: rate("cir")?,
            cburst: rate("cburst")?,
            pir: rate("pir")?,
            pburst: rate("pburst")?,
        };
        self.sw
            .runtime_mut()
            .direct_meter_set(table.id, &matches, priority, Some(cfg))
            .map_err(|e| e.to_string())
    }

    fn register(&self, name: &str) -> Result<&'static p4_target::info::RegisterInfo, String> {
        resolve_name(self.info.registers.iter(), name, |r| r.name)
            .ok_or_else(|| not_found("register", name, self.info.registers.iter().map(|r| r.name)))
    }

    fn register_write(&mut self, name: &str, index: u32, value: &str) -> CmdResult {
        let r = self.register(name)?;
        let v = parse_value(value, r.bitwidth).map_err(|e| e.to_string())?;
        self.sw
            .runtime_mut()
            .register_write(r.id, index, v)
            .map_err(|e| e.to_string())
    }

    fn check_register(&mut self, name: &str, index: u32, value: &str) -> CmdResult {
        let r = self.register(name)?;
        let want = parse_value(value, r.bitwidth).map_err(|e| e.to_string())?;
        let got = self
            .sw
            .runtime()
            .register_read(r.id, index)
            .map_err(|e| e.to_string())?;
        if got == want {
            Ok(())
        } else {
            Err(format!(
                "check_register {}[{index}]: is {got:#x}, expected {want:#x}",
                r.name
            ))
        }
    }

    fn value_set(&mut self, name: &str, members: &[String]) -> CmdResult {
        let vs = resolve_name(self.info.value_sets.iter(), name, |v| v.name).ok_or_else(|| {
            not_found(
                "value set",
                name,
                self.info.value_sets.iter().map(|v| v.name),
            )
        })?;
        let mut parsed = Vec::with_capacity(members.len());
        for m in members {
            let (v, mask) = match m.split_once("&&&") {
                Some((v, mask)) => (
                    parse_value(v, vs.bitwidth).map_err(|e| e.to_string())?,
                    parse_value(mask, vs.bitwidth).map_err(|e| e.to_string())?,
                ),
                None => {
                    let m = parse_masked(m, vs.bitwidth).map_err(|e| e.to_string())?;
                    (m.value, m.mask)
                }
            };
            parsed.push((v & mask, mask));
        }
        self.sw
            .runtime_mut()
            .value_set_write(vs.id, &parsed)
            .map_err(|e| e.to_string())
    }

    fn check_digest(&mut self, name: &str, values: &[String]) -> CmdResult {
        let d = resolve_name(self.info.digests.iter(), name, |d| d.name)
            .ok_or_else(|| not_found("digest", name, self.info.digests.iter().map(|d| d.name)))?;
        if values.len() != d.fields.len() {
            return Err(format!(
                "digest {} has {} fields, {} values given",
                d.name,
                d.fields.len(),
                values.len()
            ));
        }
        let mut want = Vec::with_capacity(values.len());
        for (f, v) in d.fields.iter().zip(values) {
            want.push(parse_value(v, f.bitwidth).map_err(|e| format!("{}: {e}", f.name))?);
        }
        let Some(pos) = self.digests.iter().position(|(id, _)| *id == d.id) else {
            return Err(format!("no (further) digest {} was sent", d.name));
        };
        let (_, got) = self.digests.remove(pos);
        if got != want {
            return Err(format!(
                "digest {}: got {got:x?}, expected {want:x?}",
                d.name
            ));
        }
        Ok(())
    }
}

fn not_found<'n>(what: &str, name: &str, known: impl Iterator<Item = &'n str>) -> String {
    let known: Vec<&str> = known.collect();
    format!(
        "no {what} named `{name}` (or the name is ambiguous); known: {}",
        known.join(", ")
    )
}

fn bare_arg(spec: &ActionSpec) -> Result<u32, String> {
    match spec.args.as_slice() {
        [(k, v)] if k.is_empty() => v
            .parse()
            .map_err(|_| format!("{}({v}): not a number", spec.name)),
        _ => Err(format!("usage: {}(ID)", spec.name)),
    }
}

/// Finds a key field by name: exact, then unique dotted suffix, after
/// rewriting p4c's `stack$0` to `stack[0]`; `X.valid` and a bare `X` also
/// name the validity key of header `X` (`X.$valid$` or `X.isValid()`), as
/// p4c's runner tries `X.$valid$` for `X` (P4_14 samples key on `data:1`).
fn key_index(table: &TableInfo, name: &str) -> Result<usize, String> {
    let mut normalized = String::with_capacity(name.len());
    let mut chars = name.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '$' && chars.peek().is_some_and(|d| d.is_ascii_digit()) {
            normalized.push('[');
            while let Some(d) = chars.peek().copied().filter(|d| d.is_ascii_digit()) {
                normalized.push(d);
                chars.next();
            }
            normalized.push(']');
        } else {
            normalized.push(c);
        }
    }
    let base = normalized
        .strip_suffix(".valid")
        .or_else(|| normalized.strip_suffix(".$valid"))
        .unwrap_or(&normalized);
    let candidates = [
        normalized.clone(),
        format!("{base}.$valid$"),
        format!("{base}.isValid()"),
    ];
    for c in &candidates {
        if let Some(k) = resolve_name(table.keys.iter(), c, |k: &KeyInfo| k.name) {
            return Ok(table
                .keys
                .iter()
                .position(|x| std::ptr::eq(x, k))
                .unwrap_or(0));
        }
    }
    Err(not_found(
        &format!("key of {}", table.name),
        name,
        table.keys.iter().map(|k| k.name),
    ))
}

/// Decodes one key value for its match kind; `None` is a wildcard.
fn field_match(key: &KeyInfo, text: &str) -> Result<Option<FieldMatch>, String> {
    let w = key.bitwidth;
    let full = p4_target::bits::mask(w);
    let e = |e: value::ValueError| e.to_string();
    if text == "*" && key.kind != MatchKind::Exact {
        return Ok(None);
    }
    Ok(match key.kind {
        MatchKind::Exact => Some(FieldMatch::Exact(parse_value(text, w).map_err(e)?)),
        MatchKind::Optional => Some(FieldMatch::Optional(parse_value(text, w).map_err(e)?)),
        MatchKind::Lpm => {
            let (value, prefix_len) = match text.split_once('/') {
                Some((v, len)) => {
                    let len: u32 = len
                        .parse()
                        .map_err(|_| format!("bad prefix length `{len}`"))?;
                    if len > w {
                        return Err(format!("prefix length {len} exceeds width {w}"));
                    }
                    (parse_value(v, w).map_err(e)?, len)
                }
                None => {
                    let m = parse_masked(text, w).map_err(e)?;
                    // Trailing don't-care digits shorten the prefix.
                    let len = w - m.mask.trailing_zeros().min(w);
                    if m.mask != full & !(p4_target::bits::mask(w - len)) {
                        return Err("only trailing digits of an LPM value may be `*`".into());
                    }
                    (m.value, len)
                }
            };
            if prefix_len == 0 {
                return Ok(None);
            }
            let prefix_mask = full & !p4_target::bits::mask(w - prefix_len);
            Some(FieldMatch::Lpm {
                value: value & prefix_mask,
                prefix_len,
            })
        }
        MatchKind::Ternary => {
            let (value, mask) = match text.split_once("&&&") {
                Some((v, m)) => (parse_value(v, w).map_err(e)?, parse_value(m, w).map_err(e)?),
                None => {
                    let m = parse_masked(text, w).map_err(e)?;
                    (m.value, m.mask)
                }
            };
            if mask == 0 {
                return Ok(None);
            }
            Some(FieldMatch::Ternary {
                value: value & mask,
                mask,
            })
        }
        MatchKind::Range => {
            let (low, high) = match text.split_once("..").or_else(|| text.split_once("->")) {
                Some((lo, hi)) => (
                    parse_value(lo, w).map_err(e)?,
                    parse_value(hi, w).map_err(e)?,
                ),
                None => {
                    let v = parse_value(text, w).map_err(e)?;
                    (v, v)
                }
            };
            if low > high {
                return Err(format!("empty range {low}..{high}"));
            }
            if low == 0 && high == full {
                return Ok(None);
            }
            Some(FieldMatch::Range { low, high })
        }
    })
}

#[cfg(test)]
mod tests;
