//! P4Runtime Write/Read throughput over loopback gRPC into a `LocalDevice`
//! (one LPM table of 65,536 entries), without and with a state file
//! ([`control::p4rt::persist`]): updates per second for one-update requests
//! and 1,000-update batches, then modifies of every entry (the journal
//! outgrows the live state, so compactions happen inside the timed loop);
//! the time to read the whole table back, the state file's size and the
//! time to restore it into a fresh service. Then, on a table of 2^20
//! entries: the insert rate in batches of 1,000 as it fills to 1,000,000
//! routes (and over the last 100,000), and a wildcard read of all of them
//! while a probe submits an empty device job every 200 µs and records how
//! long each waits: the longest wait is the longest time the read held
//! the device thread, where packets would have waited. Last, a 128-bit
//! LPM table of 2^17 entries filled with 100,000 BGP-shaped IPv6 routes
//! in batches of 1,000 (rate over the whole fill and its last 10,000).
//! The service runs
//! as `switchd` runs it (one tokio worker of its own, the device thread
//! beside it) and the client on the main thread, so a one-update Write
//! pays the thread hops it pays against the daemon; its round trip's
//! p50/p99 are printed with the rates. Run with
//! `cargo bench -p control --bench p4rt_write` (`-- --writes-only`: the
//! write rates without a state file and the 1M fill only, no reads;
//! `-- --scale-only`: the 1M and IPv6 phases only; `-- --v6-only`: the
//! IPv6 phase only; `-- --single-only`: 20,000 one-update Writes one at a time,
//! then 20,000 with 4 and with 16 in flight on one connection, each on a
//! fresh service, with the CPU each thread spent a Write and how many Writes
//! the service applied a group commit (one device job) on average; `--inflight N`
//! runs one of those only; `--unix` serves on a Unix socket instead of
//! loopback TCP; `--server-current-thread` runs the service on a
//! current-thread runtime instead of `switchd`'s one-worker runtime, an
//! experiment that showed no difference above the noise, README #17);
//! `-- --floor`: what a one-update Write cannot go below on this machine,
//! one call at a time: a `Capabilities` RPC, a Write of no updates and an
//! empty device job without gRPC (see [`floor`]; `--floor capabilities`,
//! `empty` or `job` runs one of them).

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use control::device::{DeviceExt, LocalDevice};
use control::p4rt::{P4RuntimeConfig, P4RuntimeService};
use control::serve::{Bound, Listen};
use p4_target::info::*;
use p4_target::runtime::Runtime;
use proto::p4::v1 as pb;
use proto::p4::v1::p4_runtime_client::P4RuntimeClient;
use tokio::runtime::Handle;
use tonic::transport::Channel;

static PORT: [ParamInfo; 1] = [ParamInfo {
    id: 1,
    name: "port",
    bitwidth: 9,
}];
static ACTIONS: [ActionInfo; 1] = [ActionInfo {
    id: 0x0100_0001,
    name: "set_port",
    params: &PORT,
}];
static KEYS: [KeyInfo; 1] = [KeyInfo {
    id: 1,
    name: "dst",
    bitwidth: 32,
    kind: MatchKind::Lpm,
}];
static REFS: [ActionRef; 1] = [ActionRef {
    id: 0x0100_0001,
    scope: ActionScope::TableAndDefault,
}];
static BIG: [TableInfo; 1] = [TableInfo {
    size: 1 << 20,
    ..TABLES[0]
}];
static BIG_PROGRAM: ProgramInfo = ProgramInfo {
    tables: &BIG,
    p4info_text: r#"
tables { preamble { id: 33554433 name: "routes" } match_fields { id: 1 name: "dst" bitwidth: 32 match_type: LPM } action_refs { id: 16777217 } size: 1048576 }
actions { preamble { id: 16777217 name: "set_port" } params { id: 1 name: "port" bitwidth: 9 } }
"#,
    ..PROGRAM
};

static KEYS6: [KeyInfo; 1] = [KeyInfo {
    id: 1,
    name: "dst",
    bitwidth: 128,
    kind: MatchKind::Lpm,
}];
/// The IPv6 phase's table: `roce_switch.p4`'s `ipv6_lpm` has 8,192
/// entries and the switch has no size override, so the bench declares its
/// own 128-bit LPM table of 2^17 entries to hold the 100,000 routes #17
/// asks about (as the 1M phase does for IPv4).
static V6: [TableInfo; 1] = [TableInfo {
    size: 1 << 17,
    keys: &KEYS6,
    ..TABLES[0]
}];
static V6_PROGRAM: ProgramInfo = ProgramInfo {
    tables: &V6,
    p4info_text: r#"
tables { preamble { id: 33554433 name: "routes" } match_fields { id: 1 name: "dst" bitwidth: 128 match_type: LPM } action_refs { id: 16777217 } size: 131072 }
actions { preamble { id: 16777217 name: "set_port" } params { id: 1 name: "port" bitwidth: 9 } }
"#,
    ..PROGRAM
};

static TABLES: [TableInfo; 1] = [TableInfo::plain(
    0x0200_0001,
    "routes",
    &KEYS,
    &REFS,
    65536,
    (0x0100_0001, &[0]),
)];
static PROGRAM: ProgramInfo = ProgramInfo {
    name: "bench",
    arch: "v1model",
    tables: &TABLES,
    actions: &ACTIONS,
    action_profiles: &[],
    counters: &[],
    meters: &[],
    registers: &[],
    digests: &[],
    controller_headers: &[],
    value_sets: &[],
    p4info_text: r#"
tables { preamble { id: 33554433 name: "routes" } match_fields { id: 1 name: "dst" bitwidth: 32 match_type: LPM } action_refs { id: 16777217 } size: 65536 }
actions { preamble { id: 16777217 name: "set_port" } params { id: 1 name: "port" bitwidth: 9 } }
"#,
};

fn route(ty: pb::update::Type, i: u32, port: u8) -> pb::Update {
    route_of(ty, i << 8, 24, port)
}

fn route_of(ty: pb::update::Type, addr: u32, prefix_len: i32, port: u8) -> pb::Update {
    lpm_update(ty, addr.to_be_bytes().to_vec(), prefix_len, port)
}

fn lpm_update(ty: pb::update::Type, prefix: Vec<u8>, prefix_len: i32, port: u8) -> pb::Update {
    pb::Update {
        r#type: ty as i32,
        entity: Some(pb::Entity {
            entity: Some(pb::entity::Entity::TableEntry(pb::TableEntry {
                table_id: 0x0200_0001,
                r#match: vec![pb::FieldMatch {
                    field_id: 1,
                    field_match_type: Some(pb::field_match::FieldMatchType::Lpm(
                        pb::field_match::Lpm {
                            value: prefix,
                            prefix_len,
                        },
                    )),
                }],
                action: Some(pb::TableAction {
                    r#type: Some(pb::table_action::Type::Action(pb::Action {
                        action_id: 0x0100_0001,
                        params: vec![pb::action::Param {
                            param_id: 1,
                            value: vec![port],
                        }],
                    })),
                }),
                ..Default::default()
            })),
        }),
    }
}

const N_SINGLE: u32 = 5_000;
/// One-update Writes of `--single-only` (within the 65,536-entry table).
const N_SINGLE_ONLY: u32 = 20_000;
const N_BATCHED: u32 = 50_000;
const BATCH: u32 = 1_000;

/// The server's runtime, shaped as `switchd` shapes the daemon's: one
/// tokio worker thread (the service's tasks run there), the device on a
/// thread of its own. The client runs on the bench's main thread in a
/// runtime of its own, so a request crosses from the client's thread to
/// the server's worker, to the device thread and back, as it does between
/// a controller and the daemon.
fn server_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap()
}

async fn service(server: &Handle, state: Option<&Path>) -> (P4RuntimeClient<Channel>, Duration) {
    let (client, restore, _, _) = service_of(server, &PROGRAM, state).await;
    (client, restore)
}

async fn service_of(
    server: &Handle,
    program: &'static ProgramInfo,
    state: Option<&Path>,
) -> (
    P4RuntimeClient<Channel>,
    Duration,
    Arc<LocalDevice>,
    P4RuntimeService,
) {
    let device = LocalDevice::new(Box::new(Runtime::new(program)));
    let state = state.map(Path::to_path_buf);
    let dev = device.clone();
    let (addr, restore, svc) = server
        .spawn(async move {
            let svc =
                P4RuntimeService::from_program(program, dev, P4RuntimeConfig::default()).unwrap();
            let t = Instant::now();
            if let Some(path) = state {
                svc.restore(&path).await.unwrap();
            }
            let restore = t.elapsed();
            // Served as the daemon serves (`control::serve`: same server
            // settings), on loopback TCP or, with `--unix`, on a Unix
            // socket (what a controller on the switch's host may dial).
            let listen = if let Some(dir) = SOCKET_DIR.get() {
                let n = SOCKETS.fetch_add(1, Ordering::Relaxed);
                Listen::Unix(dir.join(format!("p4rt{n}.sock")))
            } else {
                Listen::Tcp("127.0.0.1:0".parse().unwrap())
            };
            let bound = Bound::bind(&listen).await.unwrap();
            let addr = match bound.local_addr() {
                Some(addr) => addr.to_string(),
                None => listen.to_string(),
            };
            tokio::spawn(bound.serve(Some(svc.clone()), None, std::future::pending()));
            (addr, restore, svc)
        })
        .await
        .unwrap();
    let channel = control::client::connect(&addr).await.unwrap();
    let client = P4RuntimeClient::new(channel).max_decoding_message_size(64 << 20);
    (client, restore, device, svc)
}

fn request(updates: Vec<pb::Update>) -> pb::WriteRequest {
    pb::WriteRequest {
        device_id: 1,
        updates,
        ..Default::default()
    }
}

/// What [`run`] measured.
struct Rates {
    /// One update a request, updates/s.
    single: f64,
    /// Round trip of one-update requests: p50 and p99, µs.
    single_rtt: (f64, f64),
    /// Batches of 1,000 inserts, updates/s.
    batched: f64,
    /// Batches of 1,000 modifies of every entry, updates/s.
    modified: f64,
}

/// Inserts routes `range` one a request: updates/s and the round trip's
/// p50 and p99 in µs.
async fn singles(
    client: &mut P4RuntimeClient<Channel>,
    range: std::ops::Range<u32>,
) -> (f64, (f64, f64)) {
    let t = Instant::now();
    let rtts = insert_one_by_one(client, range).await;
    rate_and_quantiles(rtts, t.elapsed())
}

/// Inserts `routes` one a request, each sent when the last is answered:
/// the round trip of each.
async fn insert_one_by_one(
    client: &mut P4RuntimeClient<Channel>,
    routes: impl IntoIterator<Item = u32>,
) -> Vec<Duration> {
    use pb::update::Type::Insert;
    let routes = routes.into_iter();
    let mut rtts = Vec::with_capacity(routes.size_hint().0);
    for i in routes {
        let sent = Instant::now();
        client
            .write(request(vec![route(Insert, i, 1)]))
            .await
            .unwrap();
        rtts.push(sent.elapsed());
    }
    rtts
}

/// Updates/s of `rtts.len()` one-update Writes answered within `elapsed`,
/// and their round trip's p50 and p99 in µs.
fn rate_and_quantiles(mut rtts: Vec<Duration>, elapsed: Duration) -> (f64, (f64, f64)) {
    let rate = rtts.len() as f64 / elapsed.as_secs_f64();
    rtts.sort();
    let q = |p: f64| rtts[((rtts.len() - 1) as f64 * p) as usize].as_secs_f64() * 1e6;
    (rate, (q(0.5), q(0.99)))
}

/// Inserts routes `range` one a request from `inflight` tasks sharing
/// `client`'s connection, each sending its next Write as soon as its last
/// one is answered (P4Runtime lets a controller keep several Writes in
/// flight; their order is not promised): updates/s and the round trip's
/// p50 and p99 in µs. Every request still carries one update.
async fn singles_in_flight(
    client: &P4RuntimeClient<Channel>,
    range: std::ops::Range<u32>,
    inflight: u32,
) -> (f64, (f64, f64)) {
    let n = range.len() as u32;
    let t = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for k in 0..inflight {
        let mut client = client.clone();
        // Task k takes every inflight-th route, so all tasks end together.
        let mine: Vec<u32> = range
            .clone()
            .skip(k as usize)
            .step_by(inflight as usize)
            .collect();
        tasks.spawn(async move { insert_one_by_one(&mut client, mine).await });
    }
    let mut rtts = Vec::with_capacity(n as usize);
    while let Some(r) = tasks.join_next().await {
        rtts.extend(r.unwrap());
    }
    rate_and_quantiles(rtts, t.elapsed())
}

/// The floor under a one-update Write, each measured one call at a time
/// like `--single-only`'s first mode, on a fresh service: a `Capabilities`
/// RPC (the same channel and server, no device work: what gRPC and the
/// thread wake-ups of a unary call cost), a Write of no updates (all of a
/// Write's path, the committer and the device job included, but no table
/// work) and an empty device job submitted from a task on the service's
/// runtime (the device hop alone: the service's worker waking the device
/// thread and being woken by its reply, no gRPC).
async fn floor(server: &Handle, only: Option<&str>) {
    let n = N_SINGLE_ONLY;
    let run = |what: &str| only.is_none_or(|o| o == what);
    let (mut client, _, device, _) = service_of(server, &PROGRAM, None).await;
    let report = |what: &str,
                  cpu: &std::collections::BTreeMap<String, Duration>,
                  rtts: Vec<Duration>,
                  elapsed: Duration| {
        let (rate, (p50, p99)) = rate_and_quantiles(rtts, elapsed);
        println!(
            "p4rt_write: floor, {n} {what} one at a time: {rate:.0}/s (round trip p50 {p50:.0} µs, p99 {p99:.0} µs); {}",
            cpu_per_write(cpu, n)
        );
    };
    if run("capabilities") {
        let cpu = thread_cpu();
        let t = Instant::now();
        let mut rtts = Vec::with_capacity(n as usize);
        for _ in 0..n {
            let sent = Instant::now();
            client
                .capabilities(pb::CapabilitiesRequest { device_id: 1 })
                .await
                .unwrap();
            rtts.push(sent.elapsed());
        }
        report("Capabilities RPCs", &cpu, rtts, t.elapsed());
    }
    if run("empty") {
        let cpu = thread_cpu();
        let t = Instant::now();
        let mut rtts = Vec::with_capacity(n as usize);
        for _ in 0..n {
            let sent = Instant::now();
            client.write(request(Vec::new())).await.unwrap();
            rtts.push(sent.elapsed());
        }
        report("Writes of no update", &cpu, rtts, t.elapsed());
    }
    if !run("job") {
        return;
    }
    let cpu = thread_cpu();
    let t = Instant::now();
    let rtts = server
        .spawn(async move {
            let mut rtts = Vec::with_capacity(n as usize);
            for _ in 0..n {
                let sent = Instant::now();
                device.with_state(|_| ()).await.unwrap();
                rtts.push(sent.elapsed());
            }
            rtts
        })
        .await
        .unwrap();
    report(
        "empty device jobs from the service's runtime",
        &cpu,
        rtts,
        t.elapsed(),
    );
}

/// CPU time each thread of this process has used so far (user + system,
/// from `/proc/self/task/*/stat`), summed by thread name: the client is
/// the main thread, the service's worker `tokio-rt-worker`, the device
/// `local-device`.
fn thread_cpu() -> std::collections::BTreeMap<String, Duration> {
    // SAFETY: sysconf takes a plain integer and reads no memory of ours.
    let tick = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    let mut by_name = std::collections::BTreeMap::new();
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return by_name;
    };
    for task in tasks.flatten() {
        let Ok(stat) = std::fs::read_to_string(task.path().join("stat")) else {
            continue;
        };
        // "pid (comm) state ppid ...": utime and stime are the 12th and
        // 13th fields after the closing parenthesis.
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        let name = stat[open + 1..close].to_string();
        let rest: Vec<&str> = stat[close + 1..].split_whitespace().collect();
        let field = |i: usize| rest.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
        let ticks = field(11) + field(12);
        *by_name.entry(name).or_insert(Duration::ZERO) +=
            Duration::from_secs_f64(ticks as f64 / tick);
    }
    by_name
}

/// The CPU each thread used between `before` and now, in µs a Write of
/// `n`, as "CPU total µs a Write: name µs, ..." (threads that used less
/// than half a µs a Write left out).
fn cpu_per_write(before: &std::collections::BTreeMap<String, Duration>, n: u32) -> String {
    let mut total = 0.0;
    let mut parts = Vec::new();
    for (name, now) in thread_cpu() {
        let used = now.saturating_sub(before.get(&name).copied().unwrap_or_default());
        let us = used.as_secs_f64() * 1e6 / f64::from(n);
        if us >= 0.5 {
            total += us;
            parts.push(format!("{name} {us:.0}"));
        }
    }
    format!("CPU {total:.0} µs a Write: {}", parts.join(", "))
}

/// One-update inserts, 1,000-update inserts, then `rounds` of modifies of
/// every entry, on `client`'s service.
async fn run(client: &mut P4RuntimeClient<Channel>, rounds: u32) -> Rates {
    use pb::update::Type::{Insert, Modify};
    let (single, single_rtt) = singles(client, 0..N_SINGLE).await;
    let t = Instant::now();
    for start in (N_SINGLE..N_SINGLE + N_BATCHED).step_by(BATCH as usize) {
        let updates = (start..start + BATCH)
            .map(|i| route(Insert, i, 2))
            .collect();
        client.write(request(updates)).await.unwrap();
    }
    let batched = f64::from(N_BATCHED) / t.elapsed().as_secs_f64();
    let total = N_SINGLE + N_BATCHED;
    let t = Instant::now();
    for round in 0..rounds {
        for start in (0..total).step_by(BATCH as usize) {
            let end = (start + BATCH).min(total);
            let port = 3 + round as u8;
            let updates = (start..end).map(|i| route(Modify, i, port)).collect();
            client.write(request(updates)).await.unwrap();
        }
    }
    let modified = f64::from(total * rounds) / t.elapsed().as_secs_f64();
    Rates {
        single,
        single_rtt,
        batched,
        modified,
    }
}

/// Reads every table entry back; returns how many there were.
async fn read_all(client: &mut P4RuntimeClient<Channel>) -> usize {
    let mut stream = client
        .read(pb::ReadRequest {
            device_id: 1,
            entities: vec![pb::Entity {
                entity: Some(pb::entity::Entity::TableEntry(Default::default())),
            }],
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let mut read = 0;
    while let Some(r) = stream.message().await.unwrap() {
        read += r.entities.len();
    }
    read
}

const N_BIG: u32 = 1_000_000;
const N_V6: usize = 100_000;

/// Inserts `routes` in batches of 1,000, each built by `update` just
/// before it is sent (as a controller would): updates/s over the whole
/// fill and over (about) its last `tail` routes.
async fn fill<R>(
    client: &mut P4RuntimeClient<Channel>,
    routes: &[R],
    tail: usize,
    update: impl Fn(&R) -> pb::Update,
) -> (f64, f64) {
    let n = routes.len();
    // The tail is timed from the first batch starting in it.
    let batch = BATCH as usize;
    let tail_from = (n - tail).div_ceil(batch) * batch;
    let t = Instant::now();
    let mut last = Instant::now();
    for (k, chunk) in routes.chunks(batch).enumerate() {
        if k * batch == tail_from {
            last = Instant::now();
        }
        let updates = chunk.iter().map(&update).collect();
        client.write(request(updates)).await.unwrap();
    }
    (
        n as f64 / t.elapsed().as_secs_f64(),
        (n - tail_from) as f64 / last.elapsed().as_secs_f64(),
    )
}

/// 100,000 distinct BGP-shaped IPv6 prefixes, the same set the table
/// engines' bench measures (`p4_target::table::route_sets::bgp_ipv6`:
/// mostly /48 and /32 inside 2000::/3).
fn v6_routes() -> Vec<(u128, i32)> {
    let mut rng = p4_target::externs::Rng::new(5);
    p4_target::table::route_sets::bgp_ipv6(N_V6, &mut rng)
        .into_iter()
        .map(|(addr, len)| (addr, len as i32))
        .collect()
}

/// Fills a 2^17-entry 128-bit LPM table with [`v6_routes`] in batches of
/// 1,000.
async fn v6_at_scale(server: &Handle) {
    use pb::update::Type::Insert;
    let (mut client, _, _, _) = service_of(server, &V6_PROGRAM, None).await;
    let routes = v6_routes();
    let (all, tail) = fill(&mut client, &routes, 10_000, |&(a, len)| {
        lpm_update(Insert, a.to_be_bytes().to_vec(), len, 1)
    })
    .await;
    println!(
        "p4rt_write: {} IPv6 routes (BGP-shaped, /29../64, mostly /48 and /32) in batches of 1000: {all:.0} updates/s overall, {tail:.0} updates/s over the last 10000",
        routes.len()
    );
}

/// Fills a 2^20-entry table with 1,000,000 distinct /20../32 routes in
/// batches of 1,000, then (with `read`) reads it back while probing the
/// device thread.
async fn at_scale(server: &Handle, read: bool) {
    use pb::update::Type::Insert;
    let (mut client, _, device, _) = service_of(server, &BIG_PROGRAM, None).await;
    // Distinct routes: i spread over the address space by an odd
    // multiplier, lengths /20../32 (host bits of each cleared; a
    // collision is skipped by construction: the low 12 bits carry i's
    // high bits only where the prefix keeps them).
    let routes: Vec<(u32, i32)> = (0..N_BIG)
        .map(|i| {
            let len = 20 + (i % 13) as i32;
            let addr = i.wrapping_mul(0x9e37_79b9).rotate_left(7);
            (addr, len)
        })
        .collect();
    let mut seen = std::collections::HashSet::new();
    let routes: Vec<(u32, i32)> = routes
        .into_iter()
        .map(|(a, len)| (a & (u32::MAX << (32 - len)), len))
        .filter(|r| seen.insert(*r))
        .collect();
    drop(seen);
    let n = routes.len();
    let (all, tail) = fill(&mut client, &routes, 100_000, |&(a, len)| {
        route_of(Insert, a, len, 1)
    })
    .await;
    println!(
        "p4rt_write: {n} routes in batches of 1000: {all:.0} updates/s overall, {tail:.0} updates/s over the last 100000"
    );
    if !read {
        return;
    }
    // Probe: an empty job every 200 µs, from a thread of its own (the
    // client's thread is busy with the read); its wait is what a packet
    // would wait.
    let stop = Arc::new(AtomicBool::new(false));
    let probe = {
        let (stop, device) = (stop.clone(), device.clone());
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let mut waits = Vec::new();
                while !stop.load(Ordering::Relaxed) {
                    let t = Instant::now();
                    device.with_runtime(|_| ()).await.unwrap();
                    waits.push(t.elapsed());
                    tokio::time::sleep(Duration::from_micros(200)).await;
                }
                waits
            })
        })
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    let t = Instant::now();
    let read = read_all(&mut client).await;
    let took = t.elapsed();
    stop.store(true, Ordering::Relaxed);
    let mut waits = probe.join().unwrap();
    waits.sort();
    let q = |p: f64| waits[((waits.len() - 1) as f64 * p) as usize].as_secs_f64() * 1e6;
    println!(
        "p4rt_write: wildcard read of {read} entries: {:.0} ms; device-thread probe during it ({} probes): p50 {:.0} µs, p99 {:.0} µs, max {:.0} µs",
        took.as_secs_f64() * 1e3,
        waits.len(),
        q(0.5),
        q(0.99),
        q(1.0)
    );
}

/// `--server-current-thread` (an experiment): the service on a
/// current-thread runtime driven by a thread of its own instead of a
/// one-worker multi-thread runtime.
fn current_thread_server() -> Handle {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("server-rt".into())
        .spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            tx.send(rt.handle().clone()).unwrap();
            rt.block_on(std::future::pending::<()>());
        })
        .unwrap();
    rx.recv().unwrap()
}

/// With `--unix`: the directory the services' sockets go in (removed when
/// `main` returns), and how many were made.
static SOCKET_DIR: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
static SOCKETS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

fn main() {
    let sockets = tempfile::tempdir().unwrap();
    if std::env::args().any(|a| a == "--unix") {
        SOCKET_DIR.set(sockets.path().to_path_buf()).unwrap();
    }
    let server = server_runtime();
    let handle = if std::env::args().any(|a| a == "--server-current-thread") {
        current_thread_server()
    } else {
        server.handle().clone()
    };
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(client_main(&handle));
}

async fn client_main(server: &Handle) {
    let flag = |f: &str| std::env::args().any(|a| a == f);
    if flag("--scale-only") {
        at_scale(server, true).await;
        v6_at_scale(server).await;
        return;
    }
    if flag("--v6-only") {
        v6_at_scale(server).await;
        return;
    }
    if flag("--floor") {
        // `--floor capabilities|empty|job`: that one only.
        let only = std::env::args()
            .skip_while(|a| a != "--floor")
            .nth(1)
            .filter(|m| ["capabilities", "empty", "job"].contains(&m.as_str()));
        floor(server, only.as_deref()).await;
        return;
    }
    if flag("--single-only") {
        // `--inflight N`: only that mode (1: one at a time).
        let only: Option<u32> = std::env::args()
            .skip_while(|a| a != "--inflight")
            .nth(1)
            .map(|n| n.parse().expect("--inflight N"));
        for inflight in [1, 4, 16] {
            if only.is_some_and(|n| n != inflight) {
                continue;
            }
            // A fresh service each time (an empty table again).
            let (mut client, _, _, svc) = service_of(server, &PROGRAM, None).await;
            let cpu = thread_cpu();
            let (rate, (p50, p99)) = if inflight == 1 {
                singles(&mut client, 0..N_SINGLE_ONLY).await
            } else {
                singles_in_flight(&client, 0..N_SINGLE_ONLY, inflight).await
            };
            let mode = match inflight {
                1 => "one at a time".to_string(),
                n => format!("{n} in flight"),
            };
            let stats = svc.write_stats();
            println!(
                "p4rt_write: {N_SINGLE_ONLY} Writes of 1 update, {mode}: {rate:.0} updates/s (round trip p50 {p50:.0} µs, p99 {p99:.0} µs); {}; {:.2} Writes a group commit",
                cpu_per_write(&cpu, N_SINGLE_ONLY),
                stats.writes as f64 / stats.groups.max(1) as f64
            );
        }
        return;
    }
    let rounds = 3;
    let (mut plain, _) = service(server, None).await;
    let without = run(&mut plain, rounds).await;
    if flag("--writes-only") {
        // Only the write rates without a state file (for profiling and
        // quick before/after pairs): no reads, no state file.
        println!(
            "p4rt_write: 1 update/request {:.0} (round trip p50 {:.0} µs, p99 {:.0} µs), 1000 updates/request {:.0}, modify all x{rounds} {:.0} updates/s",
            without.single,
            without.single_rtt.0,
            without.single_rtt.1,
            without.batched,
            without.modified
        );
        at_scale(server, false).await;
        v6_at_scale(server).await;
        return;
    }
    let t = Instant::now();
    let read = read_all(&mut plain).await;
    println!(
        "p4rt_write: wildcard read of {read} entries: {:.1} ms",
        t.elapsed().as_secs_f64() * 1e3
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bench.p4rt");
    let (mut persisted, _) = service(server, Some(&path)).await;
    let with = run(&mut persisted, rounds).await;
    let size = std::fs::metadata(&path).unwrap().len();
    let (_, restore) = service(server, Some(&path)).await;
    let total = N_SINGLE + N_BATCHED;
    for (what, a, b) in [
        ("1 update/request", without.single, with.single),
        ("1000 updates/request", without.batched, with.batched),
        (
            "modify all x3, 1000/request",
            without.modified,
            with.modified,
        ),
    ] {
        println!(
            "p4rt_write: {what:<28} {a:>9.0} updates/s without state file, {b:>9.0} with ({:.0}%)",
            100.0 * b / a
        );
    }
    println!(
        "p4rt_write: 1 update/request round trip p50 / p99: {:.0} / {:.0} µs without state file, {:.0} / {:.0} µs with",
        without.single_rtt.0, without.single_rtt.1, with.single_rtt.0, with.single_rtt.1
    );
    println!(
        "p4rt_write: state file after {} updates on {total} live entries: {:.1} MB; restore into a fresh service: {:.0} ms",
        total * (1 + rounds),
        size as f64 / 1e6,
        restore.as_secs_f64() * 1e3
    );
    at_scale(server, true).await;
    v6_at_scale(server).await;
}
