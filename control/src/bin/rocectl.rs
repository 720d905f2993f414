//! `rocectl`: command-line client of the roceswitch control plane.
//!
//! `rocectl [--addr unix:/path|HOST:PORT (default 127.0.0.1:9559, or $ROCESWITCH_ADDR)] [--ca F [--cert F --key F]] fabric get|set FILE|validate FILE|counters|events`,
//! `rocectl p4rt capabilities|pipeline`, `rocectl table add|modify|delete|list
//! TABLE [MATCH...] [ACTION [PARAM...]]` and `rocectl counter read NAME [INDEX]`
//! (P4Runtime by name: the names resolve against the P4Info the server
//! returns, any unique dotted suffix will do, see `control::p4cli`),
//! `rocectl headroom --speed 100G --cable 100m --mtu 4200` (R-HR-2, offline)
//! `rocectl watch` (alias of `fabric events`; `--deadlock`: the switch's
//! PFC pause-dependency view, live, then its SVG) and `rocectl top [--once]`
//! (a redrawn ports x priorities view), `rocectl counters ethtool|pfc|queue|watermark
//! [--port swp1] [--json] [--clear] [--raw]` (views::counters). Fabric configurations are the
//! JSON form of `control::fabric::FabricConfig` (the daemon's state file
//! format). Exit status: 0 success, 1 the server refused or failed, 2 bad
//! input (the problems are printed, one per line, with their field).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use control::fabric::config::FabricConfig;
use control::fabric::convert;
use control::p4cli::{self, ops};
use control::views;
use proto::p4::v1 as p4pb;
use proto::roceswitch::fabric::v1 as pb;

#[derive(Parser, Debug)]
#[command(name = "rocectl", about = "roceswitch control-plane client")]
struct Cli {
    /// Server address: `unix:/path` or `HOST:PORT` (the daemon's default).
    #[arg(long, env = control::serve::ADDR_ENV, default_value = control::serve::DEFAULT_ADDR)]
    addr: String,
    /// TLS: the CA (PEM) that signed the server's certificate.
    #[arg(long, value_name = "FILE")]
    ca: Option<PathBuf>,
    /// Mutual TLS: this client's certificate (PEM); needs --ca and --key.
    #[arg(long, value_name = "FILE", requires_all = ["ca", "key"])]
    cert: Option<PathBuf>,
    /// Mutual TLS: the private key (PEM) of --cert.
    #[arg(long, value_name = "FILE", requires = "cert")]
    key: Option<PathBuf>,
    /// TLS: the server name to verify (default: the address's host, `localhost` for unix:).
    #[arg(long, value_name = "NAME", requires = "ca")]
    tls_domain: Option<String>,
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Fabric QoS configuration, counters and events.
    Fabric {
        #[command(subcommand)]
        cmd: FabricCmd,
    },
    /// P4Runtime queries.
    P4rt {
        #[command(subcommand)]
        cmd: P4Cmd,
    },
    /// P4 table entries by name (P4Runtime Write/Read, as primary).
    Table {
        #[command(subcommand)]
        cmd: TableCmd,
        #[command(flatten)]
        p4: P4Opts,
    },
    /// PFC headroom of one lossless PG (the SONiC/Mellanox formula, R-HR-2),
    /// or with --config/--ports the buffer budget of a whole switch.
    Headroom(HeadroomArgs),
    /// LLDP/DCBX per port: what we advertise, what the neighbour
    /// advertises, and whether they match (PFC, RoCE app priority, ETS).
    Dcbx {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
        /// Turn DCBX on (`on`) or off (`off`) on every fabric port instead.
        #[arg(long, value_name = "on|off")]
        set: Option<String>,
        /// With --set on: chassis ID and System Name.
        #[arg(long)]
        system_name: Option<String>,
    },
    /// RoCE security: each port's RoCE source allowlist and P_Key
    /// partitions, and its drops by reason; `allow` / `pkey` edit them
    /// (the fabric service validates, applies and persists the whole).
    Security {
        #[command(subcommand)]
        cmd: Option<SecurityCmd>,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Follow the fabric event stream (alias of `fabric events`).
    Watch {
        /// Stop after this many events.
        #[arg(long)]
        count: Option<usize>,
        /// One JSON object per event instead of a sentence.
        #[arg(long)]
        json: bool,
        /// The PFC deadlock view of this switch instead: which egress
        /// queues are paused, which ingress PGs assert XOFF, what waits for
        /// what (redrawn as it changes); on Ctrl-C (or after --seconds) the
        /// graph and a timeline of pause states go to --svg.
        #[arg(long, conflicts_with_all = ["count", "json"])]
        deadlock: bool,
        /// With --deadlock: stop after this many seconds.
        #[arg(long, requires = "deadlock")]
        seconds: Option<f64>,
        /// With --deadlock: where the picture goes.
        #[arg(long, default_value = "pause-graph.svg", requires = "deadlock")]
        svg: PathBuf,
    },
    /// Packet traces: each selected packet's parser states, tables,
    /// traffic-manager decisions (PG, buffer, queue, pause, ECN) and what
    /// left, one indented block per packet (docs/trace.md).
    Trace {
        /// Only packets arriving on this port.
        #[arg(long)]
        port: Option<u32>,
        /// Header-field match, e.g. 'udp.dst_port == 4791 && bth.opcode == 0x0a'.
        #[arg(long, value_name = "EXPR")]
        filter: Option<String>,
        /// Trace one in N of the packets that pass --port and --filter.
        #[arg(long, value_name = "N", default_value_t = 1)]
        sample: u32,
        /// Stop after this many traces (default 10 unless --duration is given).
        #[arg(long)]
        count: Option<u64>,
        /// Stop after this many seconds.
        #[arg(long, value_name = "SECS")]
        duration: Option<f64>,
        /// One JSON object per trace (JSON lines) instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Live view of ports x priorities: queue depth, PFC, paused, ECN marks, drops.
    Top {
        /// Seconds between frames.
        #[arg(long, default_value_t = 1.0)]
        interval: f64,
        /// Print one frame (no screen clearing) and exit.
        #[arg(long)]
        once: bool,
        /// Only these ports (repeatable).
        #[arg(long)]
        port: Vec<u32>,
    },
    /// Counters under the names of `ethtool -S` (per port) and SONiC's
    /// `show pfc counters`, `show queue counters`, `show priority-group
    /// watermark` (tables); `--clear` snapshots them like `sonic-clear`.
    Counters {
        /// Which layout.
        #[arg(value_enum, default_value = "ethtool")]
        view: CountersView,
        /// Only this port: interface name (e.g. swp1) or number (repeatable).
        #[arg(long)]
        port: Vec<String>,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        /// Snapshot every counter now (stored client-side); later reads
        /// print the difference.
        #[arg(long)]
        clear: bool,
        /// Ignore the snapshot: print the counters since the daemon started.
        #[arg(long)]
        raw: bool,
    },
    /// P4 indirect counters by name.
    Counter {
        #[command(subcommand)]
        cmd: CounterCmd,
        #[command(flatten)]
        p4: P4Opts,
    },
}

/// The layouts of `rocectl counters`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum CountersView {
    /// `ethtool -S`: name: value lines per port.
    Ethtool,
    /// `show pfc counters`.
    Pfc,
    /// `show queue counters`.
    Queue,
    /// `show priority-group watermark` and `show queue watermark`.
    Watermark,
}

/// Where `--clear` keeps its snapshot for the daemon at `addr`, as SONiC
/// keeps `sonic-clear`'s: `$XDG_CACHE_HOME/rocectl/`, else `/tmp/rocectl-<uid>/`.
fn counters_snapshot_path(addr: &str) -> PathBuf {
    let dir = match std::env::var_os("XDG_CACHE_HOME") {
        Some(d) if !d.is_empty() => PathBuf::from(d).join("rocectl"),
        // SAFETY: getuid has no preconditions and cannot fail.
        _ => PathBuf::from(format!("/tmp/rocectl-{}", unsafe { libc::getuid() })),
    };
    let tag: String = addr
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    dir.join(format!("counters-{tag}.json"))
}

/// `rocectl counters`.
async fn counters(
    channel: tonic::transport::Channel,
    addr: &str,
    view: CountersView,
    ports: &[String],
    json: bool,
    clear: bool,
    raw: bool,
) -> Result<(), Failure> {
    use control::views::counters as v;
    let io = |what: String| move |e: std::io::Error| Failure::Input(format!("{what}: {e}"));
    let reply = pb::fabric_qos_client::FabricQosClient::new(channel)
        .get_counters(pb::CountersRequest { ports: Vec::new() })
        .await?
        .into_inner();
    let all = convert::counter_set_from(&reply);
    let snapshot = counters_snapshot_path(addr);
    if clear {
        if let Some(dir) = snapshot.parent() {
            std::fs::create_dir_all(dir).map_err(io(format!("creating {}", dir.display())))?;
        }
        let bytes = serde_json::to_vec(&all).unwrap_or_default();
        std::fs::write(&snapshot, bytes).map_err(io(format!("writing {}", snapshot.display())))?;
        println!("Cleared counters");
        return Ok(());
    }
    let mut set = match std::fs::read(&snapshot) {
        Ok(bytes) if !raw => {
            let base: control::fabric::CounterSet =
                serde_json::from_slice(&bytes).map_err(|e| {
                    Failure::Input(format!(
                        "reading {}: {e} (remove it to start over)",
                        snapshot.display()
                    ))
                })?;
            v::since(&all, &base)
        }
        _ => all,
    };
    if !ports.is_empty() {
        let mut keep = Vec::new();
        for p in ports {
            keep.push(v::find_port(&set, p).ok_or_else(|| {
                Failure::Input(format!("--port {p}: no such port name or number"))
            })?);
        }
        set.priorities.retain(|c| keep.contains(&c.port));
        set.queues.retain(|c| keep.contains(&c.port));
        set.pgs.retain(|c| keep.contains(&c.port));
        set.ports.retain(|c| keep.contains(&c.port));
    }
    let text = match (view, json) {
        (CountersView::Ethtool, false) => {
            let mut out = String::new();
            let ports: Vec<u16> = set.ports.iter().map(|p| p.port).collect();
            let heading = ports.len() > 1;
            for p in ports {
                if heading {
                    out.push_str(&format!("{}:\n", v::port_name(&set, p)));
                }
                out.push_str(&v::ethtool_text(&v::ethtool_stats(&set, p)));
            }
            out
        }
        (CountersView::Ethtool, true) => {
            let obj: serde_json::Map<String, serde_json::Value> = set
                .ports
                .iter()
                .map(|p| {
                    (
                        v::port_name(&set, p.port),
                        v::ethtool_json(&v::ethtool_stats(&set, p.port)),
                    )
                })
                .collect();
            serde_json::to_string_pretty(&obj).unwrap_or_default()
        }
        (CountersView::Pfc, false) => v::pfc_table(&set),
        (CountersView::Pfc, true) => {
            serde_json::to_string_pretty(&v::pfc_json(&set)).unwrap_or_default()
        }
        (CountersView::Queue, false) => v::queue_table(&set),
        (CountersView::Queue, true) => {
            serde_json::to_string_pretty(&v::queue_json(&set)).unwrap_or_default()
        }
        (CountersView::Watermark, false) => v::watermark_table(&set),
        (CountersView::Watermark, true) => {
            serde_json::to_string_pretty(&v::watermark_json(&set)).unwrap_or_default()
        }
    };
    print!("{text}");
    if json {
        println!();
    }
    Ok(())
}

#[derive(clap::Args, Debug)]
struct P4Opts {
    /// P4Runtime device id.
    #[arg(long, default_value_t = 1, global = true)]
    device_id: u64,
    /// Election id used to become primary before a Write.
    #[arg(long, default_value_t = u64::MAX as u128, global = true)]
    election_id: u128,
}

#[derive(Subcommand, Debug)]
enum TableCmd {
    /// Insert an entry: `TABLE MATCH... ACTION PARAM... [--priority N]`.
    Add(EntryArgs),
    /// Change the action of an existing entry.
    Modify(EntryArgs),
    /// Delete the entry with these matches (no action).
    Delete(EntryArgs),
    /// Print the entries of TABLE.
    List { table: String },
}

#[derive(clap::Args, Debug)]
struct EntryArgs {
    /// Table name (full or unique dotted suffix).
    table: String,
    /// One value per match field in P4Info order (`*` leaves a ternary,
    /// LPM, range or optional field out), then the action name and its
    /// parameters in order.
    args: Vec<String>,
    /// Entry priority (required by tables with ternary, range or optional keys).
    #[arg(long)]
    priority: Option<i32>,
}

#[derive(clap::Args, Debug)]
struct HeadroomArgs {
    /// Port speed: `100G`, `25G`, `400G`, `100M` (a bare number is bit/s).
    #[arg(long, default_value = "100G")]
    speed: String,
    /// Cable length: `100m`, `5m`, `2km` or metres as a number.
    #[arg(long, default_value = "100m")]
    cable: String,
    /// Port MTU in bytes.
    #[arg(long, default_value_t = 9100)]
    mtu: u32,
    /// Whole-switch budget of a fabric configuration (JSON, as `fabric get`
    /// prints it): per-PG and total headroom, shared pool left, thresholds,
    /// what the pool affords; refuses a configuration that cannot be lossless.
    #[arg(long, value_name = "FILE", conflicts_with = "ports")]
    config: Option<PathBuf>,
    /// Whole-switch budget of N identical ports (`--speed`, `--cable`,
    /// `--mtu`, `--lossless`, `--pool`).
    #[arg(long, value_name = "N")]
    ports: Option<u16>,
    /// Lossless priorities of every port (with --ports).
    #[arg(long, value_delimiter = ',', default_value = "3")]
    lossless: Vec<u8>,
    /// Shared buffer of the switch in bytes (with --ports).
    #[arg(long, default_value_t = 16 << 20)]
    pool: u64,
    /// Print JSON instead of the table.
    #[arg(long)]
    json: bool,
    /// ASIC constants: spectrum1..spectrum6 or tofino2.
    #[arg(long, default_value = "spectrum2")]
    asic: String,
    /// Lossless traffic pattern MTU in bytes (R-HR-4).
    #[arg(long, default_value_t = 1024)]
    lossless_mtu: u32,
    /// Lossless traffic pattern share of small packets, percent (R-HR-4).
    #[arg(long, default_value_t = 50)]
    small_packet_percentage: u8,
}

/// Mb/s from `100G`, `25g`, `100M` (the one rate parser,
/// [`dataplane::units::parse_rate_bps`]); whole Mb/s, as the calculator
/// takes them.
fn parse_speed_mbps(text: &str) -> Result<u64, Failure> {
    dataplane::units::parse_rate_bps(text)
        .ok()
        .map(|bps| bps / 1_000_000)
        .filter(|&mbps| mbps > 0)
        .ok_or_else(|| {
            Failure::Input(format!(
                "--speed: bad speed {text:?} (e.g. 100G, 25G, 100M)"
            ))
        })
}

/// Metres from `100m`, `2km` or a bare number of metres.
fn parse_cable_m(text: &str) -> Result<u32, Failure> {
    let t = text.trim();
    let (digits, scale) = if let Some(d) = t.strip_suffix("km") {
        (d, 1000)
    } else if let Some(d) = t.strip_suffix('m') {
        (d, 1)
    } else {
        (t, 1)
    };
    digits
        .parse::<u32>()
        .ok()
        .and_then(|v| v.checked_mul(scale))
        .ok_or_else(|| Failure::Input(format!("--cable: bad length {text:?} (e.g. 100m)")))
}

/// The fabric configuration `rocectl headroom --config/--ports` budgets.
fn budget_config(a: &HeadroomArgs) -> Result<Option<FabricConfig>, Failure> {
    use control::fabric::config::{BufferConfig, PortConfig, Trust};
    if let Some(file) = &a.config {
        let bytes =
            std::fs::read(file).map_err(|e| Failure::Input(format!("{}: {e}", file.display())))?;
        let cfg = serde_json::from_slice(&bytes)
            .map_err(|e| Failure::Input(format!("{}: {e}", file.display())))?;
        return Ok(Some(cfg));
    }
    let Some(n) = a.ports else { return Ok(None) };
    let speed_bps = parse_speed_mbps(&a.speed)? * 1_000_000;
    let cable_length_m = parse_cable_m(&a.cable)?;
    Ok(Some(FabricConfig {
        ports: (0..n)
            .map(|port| PortConfig {
                port,
                speed_bps,
                mtu_bytes: a.mtu,
                cable_length_m,
                trust: Some(Trust::Dscp),
                pfc_priorities: a.lossless.clone(),
            })
            .collect(),
        buffer: BufferConfig {
            pool_size_bytes: a.pool,
            ..Default::default()
        },
        ..Default::default()
    }))
}

fn headroom(a: &HeadroomArgs) -> Result<(), Failure> {
    use control::views::budget::{SwitchBudget, json, table};
    use dataplane::headroom::{AsicPreset, HeadroomInputs, mellanox};
    if let Some(cfg) = budget_config(a)? {
        let s = SwitchBudget::of(&cfg);
        if a.json {
            println!("{:#}", json(&s));
        } else {
            print!("{}", table(&s));
        }
        return if s.is_lossless() {
            Ok(())
        } else {
            Err(Failure::Input(s.explanation))
        };
    }
    let asic = match a.asic.to_ascii_lowercase().as_str() {
        "spectrum1" | "spectrum" => AsicPreset::Spectrum1,
        "spectrum2" => AsicPreset::Spectrum2,
        "spectrum3" => AsicPreset::Spectrum3,
        "spectrum4" => AsicPreset::Spectrum4,
        "spectrum5" => AsicPreset::Spectrum5,
        "spectrum6" => AsicPreset::Spectrum6,
        "tofino2" => AsicPreset::Tofino2,
        other => {
            return Err(Failure::Input(format!(
                "--asic: unknown {other:?} (spectrum1..spectrum6, tofino2)"
            )));
        }
    };
    let mut inp = HeadroomInputs::new(
        parse_speed_mbps(&a.speed)?,
        parse_cable_m(&a.cable)?,
        a.mtu,
        asic,
    );
    inp.lossless_mtu_bytes = a.lossless_mtu;
    inp.small_packet_percentage = a.small_packet_percentage;
    let r = mellanox(&inp).map_err(|e| Failure::Input(e.to_string()))?;
    if a.json {
        println!(
            "{:#}",
            serde_json::json!({"xon_bytes": r.xon_bytes, "xoff_bytes": r.xoff_bytes, "size_bytes": r.size_bytes})
        );
        return Ok(());
    }
    println!("xon_bytes  {}", r.xon_bytes);
    println!("xoff_bytes {}", r.xoff_bytes);
    println!("size_bytes {}", r.size_bytes);
    Ok(())
}

/// `rocectl dcbx`: the per-port comparison, or `--set on|off`.
async fn dcbx(
    channel: tonic::transport::Channel,
    json: bool,
    set: Option<&str>,
    system_name: Option<String>,
) -> Result<(), Failure> {
    let mut c = proto::roceswitch::fabric::v1::fabric_qos_client::FabricQosClient::new(channel);
    if let Some(v) = set {
        let mut d = c.get_dcbx(pb::GetConfigRequest {}).await?.into_inner();
        d.enabled = match v {
            "on" => true,
            "off" => false,
            other => {
                return Err(Failure::Input(format!(
                    "--set takes on or off, not {other}"
                )));
            }
        };
        if let Some(n) = system_name {
            d.system_name = n;
        }
        let reply = c.set_dcbx(d).await?.into_inner();
        println!("applied, generation {}", reply.generation);
        return Ok(());
    }
    let ports = c
        .get_dcbx_status(pb::GetConfigRequest {})
        .await?
        .into_inner()
        .ports;
    if json {
        let v: Vec<serde_json::Value> = ports.iter().map(views::dcbx::dcbx_json).collect();
        println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
    } else {
        print!("{}", views::dcbx::dcbx_table(&ports));
    }
    Ok(())
}

/// `rocectl security`: show, or edit one entry and set the section.
async fn security(
    channel: tonic::transport::Channel,
    cmd: Option<SecurityCmd>,
    json: bool,
) -> Result<(), Failure> {
    use control::views::security as view;
    use dataplane::fabric::security::Membership;
    let mut c = proto::roceswitch::fabric::v1::fabric_qos_client::FabricQosClient::new(channel);
    let wire = c.get_security(pb::GetConfigRequest {}).await?.into_inner();
    let mut cfg = convert::security_from(&wire);
    let edited = match cmd.unwrap_or(SecurityCmd::Show) {
        SecurityCmd::Show => {
            let counters = c
                .get_counters(pb::CountersRequest { ports: Vec::new() })
                .await?
                .into_inner();
            let set = convert::counter_set_from(&counters);
            let drops: Vec<_> = set
                .ports
                .iter()
                .map(|p| (p.port, p.security_drops))
                .collect();
            if json {
                let v = view::to_json(&cfg, &drops);
                println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
            } else {
                print!("{}", view::table(&cfg, &drops));
            }
            return Ok(());
        }
        SecurityCmd::Allow {
            cmd: AllowCmd::Add { port, source, vlan },
        } => view::allow_add(&mut cfg, port, &source, vlan),
        SecurityCmd::Allow {
            cmd: AllowCmd::Del { port, source, vlan },
        } => view::allow_del(&mut cfg, port, &source, vlan),
        SecurityCmd::Pkey {
            cmd: PkeyCmd::Add { port, key, limited },
        } => view::parse_partition(&key).and_then(|key| {
            let m = if limited {
                Membership::Limited
            } else {
                Membership::Full
            };
            view::pkey_add(&mut cfg, port, key, m)
        }),
        SecurityCmd::Pkey {
            cmd: PkeyCmd::Del { port, key },
        } => view::parse_partition(&key).and_then(|key| view::pkey_del(&mut cfg, port, key)),
    };
    edited.map_err(Failure::Input)?;
    let reply = c
        .set_security(convert::security_to(&cfg))
        .await?
        .into_inner();
    println!("applied, generation {}", reply.generation);
    Ok(())
}

async fn follow_events(
    channel: tonic::transport::Channel,
    count: Option<usize>,
    json: bool,
) -> Result<(), Failure> {
    let mut c = proto::roceswitch::fabric::v1::fabric_qos_client::FabricQosClient::new(channel);
    let mut stream = c
        .watch_events(pb::WatchEventsRequest {})
        .await?
        .into_inner();
    let mut seen = 0;
    while count.is_none_or(|n| seen < n) {
        let Some(ev) = stream.message().await? else {
            break;
        };
        if json {
            println!("{}", views::events::event_json(&ev));
        } else {
            println!("{}", views::events::event_line(&ev));
        }
        seen += 1;
    }
    Ok(())
}

/// `rocectl watch --deadlock`: this switch's pause-dependency view, live,
/// then its picture.
async fn watch_deadlock(
    channel: tonic::transport::Channel,
    seconds: Option<f64>,
    svg: &std::path::Path,
) -> Result<(), Failure> {
    use control::pausewatch::{PauseWatch, follow, view};
    let tty = std::io::IsTerminal::is_terminal(&std::io::stdout());
    let mut watch = PauseWatch::new(dataplane::deadlock::PauseGraph::new());
    let stop = async {
        match seconds {
            Some(s) => {
                tokio::select! {
                    _ = tokio::time::sleep(std::time::Duration::from_secs_f64(s.max(0.0))) => {},
                    _ = tokio::signal::ctrl_c() => {},
                }
            }
            None => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    };
    follow(vec![("switch".into(), channel)], &mut watch, stop, |g| {
        if tty {
            print!("\x1b[2J\x1b[H");
        }
        println!("{}", view(g, 1));
    })
    .await?;
    let g = watch.graph();
    dataplane::deadlock::write_svg(
        g,
        svg,
        "PFC pause dependencies of one switch (peers unnamed)",
        dataplane::time::Instant::ZERO,
        None,
    )
    .map_err(|e| Failure::Server(format!("writing {}: {e}", svg.display())))?;
    println!("wrote {}", svg.display());
    Ok(())
}

/// The fabric `Trace` request for `rocectl trace`'s options (the filter is
/// checked here first, so a typo is reported before anything is sent).
fn trace_request(
    port: Option<u32>,
    filter: Option<String>,
    sample: u32,
    count: Option<u64>,
    duration: Option<f64>,
) -> Result<pb::TraceRequest, Failure> {
    if let Some(f) = &filter {
        f.parse::<p4_target::trace::FieldFilter>()
            .map_err(|e| Failure::Input(format!("--filter: {e}")))?;
    }
    let duration_ms = match duration {
        Some(d) if d.is_finite() && d > 0.0 => (d * 1000.0).ceil() as u64,
        Some(_) => {
            return Err(Failure::Input(
                "--duration: a positive number of seconds".into(),
            ));
        }
        None => 0,
    };
    Ok(pb::TraceRequest {
        ingress_port: port,
        filter: filter.unwrap_or_default(),
        sample_one_in: sample.max(1),
        count: count.unwrap_or(if duration.is_some() { 0 } else { 10 }),
        duration_ms,
    })
}

/// Prints the switch's packet traces as they arrive.
async fn follow_traces(
    channel: tonic::transport::Channel,
    request: pb::TraceRequest,
    json: bool,
) -> Result<(), Failure> {
    let mut c = proto::roceswitch::fabric::v1::fabric_qos_client::FabricQosClient::new(channel);
    let mut stream = c.trace(request).await?.into_inner();
    let mut dropped = 0;
    while let Some(reply) = stream.message().await? {
        dropped = reply.dropped;
        if json {
            println!("{}", reply.json);
        } else {
            match serde_json::from_str::<p4_target::trace::PacketTrace>(&reply.json) {
                Ok(t) => print!("{t}"),
                Err(e) => {
                    return Err(Failure::Server(format!(
                        "the switch sent a trace this rocectl cannot read ({e}); use --json"
                    )));
                }
            }
        }
    }
    if dropped > 0 {
        eprintln!("{dropped} traces dropped: the switch produced them faster than they were read");
    }
    Ok(())
}

async fn top(
    channel: tonic::transport::Channel,
    interval_s: f64,
    once: bool,
    ports: Vec<u32>,
) -> Result<(), Failure> {
    if !(interval_s.is_finite() && interval_s >= 0.05) {
        return Err(Failure::Input("--interval: at least 0.05 s".to_string()));
    }
    let mut c = proto::roceswitch::fabric::v1::fabric_qos_client::FabricQosClient::new(channel);
    let mut prev: Option<(std::time::Instant, Vec<pb::PriorityCounters>)> = None;
    loop {
        let now = c
            .get_counters(pb::CountersRequest {
                ports: ports.clone(),
            })
            .await?
            .into_inner()
            .counters;
        let at = std::time::Instant::now();
        let frame = match &prev {
            Some((t, p)) => {
                views::top::top_frame(Some(p), &now, at.duration_since(*t).as_secs_f64())
            }
            None => views::top::top_frame(None, &now, 0.0),
        };
        if once {
            print!("{frame}");
            return Ok(());
        }
        // Clear the screen, home the cursor, redraw.
        print!("\x1b[2J\x1b[H{frame}");
        use std::io::Write as _;
        let _ = std::io::stdout().flush();
        prev = Some((at, now));
        tokio::select! {
            _ = tokio::time::sleep(std::time::Duration::from_secs_f64(interval_s)) => {}
            _ = tokio::signal::ctrl_c() => return Ok(()),
        }
    }
}

#[derive(Subcommand, Debug)]
enum SecurityCmd {
    /// Settings and drops per port (the default).
    Show,
    /// The RoCE source allowlist of a port: RoCE v2 (UDP 4791) and v1
    /// (EtherType 0x8915) in from other sources is dropped; a port with
    /// no entries is not filtered.
    Allow {
        #[command(subcommand)]
        cmd: AllowCmd,
    },
    /// The P_Key partitions of a port (IBTA membership: a limited member
    /// talks only to full members); a port with none does not check.
    Pkey {
        #[command(subcommand)]
        cmd: PkeyCmd,
    },
}

#[derive(Subcommand, Debug)]
enum AllowCmd {
    /// Admit RoCE from SOURCE on PORT.
    Add {
        port: u16,
        /// `10.0.0.1`, `10.0.0.0/24`, `fe80::/64` (a GID prefix) or a RoCE
        /// v1 source MAC `02:00:00:00:0a:01`.
        source: String,
        /// Only in this VLAN (0: untagged only).
        #[arg(long)]
        vlan: Option<u32>,
    },
    /// Remove an entry.
    Del {
        port: u16,
        source: String,
        /// The entry's VLAN, if it has one.
        #[arg(long)]
        vlan: Option<u32>,
    },
}

#[derive(Subcommand, Debug)]
enum PkeyCmd {
    /// Make PORT a member of partition KEY (0x0001..0x7fff; 0x7fff is the
    /// default partition; a P_Key's top bit is ignored), full unless --limited.
    Add {
        port: u16,
        key: String,
        /// Limited membership (may talk to full members only).
        #[arg(long)]
        limited: bool,
    },
    /// Take PORT out of partition KEY.
    Del { port: u16, key: String },
}

#[derive(Subcommand, Debug)]
enum CounterCmd {
    /// Print packets and bytes of counter NAME (all indices, or INDEX).
    Read { name: String, index: Option<i64> },
}

#[derive(Subcommand, Debug)]
enum FabricCmd {
    /// Print the configuration as JSON.
    Get,
    /// Validate FILE locally, then apply it as a whole.
    Set { file: PathBuf },
    /// Validate FILE locally only (no server needed).
    Validate { file: PathBuf },
    /// Per-(port, priority) counters.
    Counters {
        /// Only these ports (repeatable).
        #[arg(long)]
        port: Vec<u32>,
    },
    /// Follow the event stream.
    Events {
        /// Stop after this many events.
        #[arg(long)]
        count: Option<usize>,
        /// One JSON object per event instead of a sentence.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand, Debug)]
enum P4Cmd {
    /// The server's P4Runtime API version.
    Capabilities {
        #[arg(long, default_value_t = 0)]
        device_id: u64,
    },
    /// Tables and actions of the loaded pipeline, and its cookie.
    Pipeline {
        #[arg(long, default_value_t = 1)]
        device_id: u64,
    },
}

enum Failure {
    Input(String),
    Server(String),
}

impl From<tonic::Status> for Failure {
    fn from(s: tonic::Status) -> Self {
        let mut m = format!("{}: {}", control::client::code_name(s.code()), s.message());
        push_causes(&mut m, &s);
        Failure::Server(m)
    }
}

impl From<tonic::transport::Error> for Failure {
    fn from(e: tonic::transport::Error) -> Self {
        let mut m = format!("connect: {e}");
        push_causes(&mut m, &e);
        Failure::Server(m)
    }
}

/// Why `addr` could not be dialled, and how to dial elsewhere.
fn unreachable_daemon(addr: &str, e: &tonic::transport::Error) -> Failure {
    let mut m = format!("cannot reach roceswitch at {addr}");
    push_causes(&mut m, e);
    m.push_str(&format!(
        "\n  the daemon listens on {} unless started with --grpc; \
         point rocectl elsewhere with --addr ADDR or {}=ADDR (unix:/path or HOST:PORT)",
        control::serve::DEFAULT_ADDR,
        control::serve::ADDR_ENV,
    ));
    Failure::Server(m)
}

/// Appends `: cause` for each source of `e`: tonic's transport failures say
/// only "transport error", the cause says what happened (connection refused,
/// a TLS alert such as CertificateRequired, ...).
fn push_causes(m: &mut String, e: &dyn std::error::Error) {
    let mut source = e.source();
    let mut last = String::new();
    while let Some(cause) = source {
        // Layers often repeat their inner error's text; say it once.
        let text = cause.to_string();
        if text != last {
            m.push_str(": ");
            m.push_str(&text);
        }
        last = text;
        source = cause.source();
    }
}

impl From<control::tls::TlsError> for Failure {
    fn from(e: control::tls::TlsError) -> Self {
        Failure::Input(e.to_string())
    }
}

fn read_config(file: &PathBuf) -> Result<FabricConfig, Failure> {
    let bytes =
        std::fs::read(file).map_err(|e| Failure::Input(format!("{}: {e}", file.display())))?;
    let cfg: FabricConfig = serde_json::from_slice(&bytes)
        .map_err(|e| Failure::Input(format!("{}: {e}", file.display())))?;
    let errors = cfg.validate();
    if errors.is_empty() {
        Ok(cfg)
    } else {
        Err(Failure::Input(
            errors
                .iter()
                .map(|e| e.to_string())
                .collect::<Vec<_>>()
                .join("\n"),
        ))
    }
}

impl From<p4cli::Error> for Failure {
    fn from(e: p4cli::Error) -> Self {
        match e {
            p4cli::Error::Status(s) => s.into(),
            e if e.is_input() => Failure::Input(e.to_string()),
            e => Failure::Server(e.to_string()),
        }
    }
}

/// `rocectl table ...`.
async fn table(
    channel: tonic::transport::Channel,
    cmd: TableCmd,
    p4: &P4Opts,
) -> Result<(), Failure> {
    use p4pb::update::Type;
    let (op, a) = match cmd {
        TableCmd::List { table } => {
            for line in ops::list_entries(channel, p4.device_id, &table).await? {
                println!("{line}");
            }
            return Ok(());
        }
        TableCmd::Add(a) => (Type::Insert, a),
        TableCmd::Modify(a) => (Type::Modify, a),
        TableCmd::Delete(a) => (Type::Delete, a),
    };
    let target = ops::Target {
        device_id: p4.device_id,
        election_id: p4.election_id,
    };
    let spec = ops::EntrySpec {
        table: &a.table,
        args: &a.args,
        priority: a.priority,
    };
    ops::write_entry(channel, &target, op, &spec).await?;
    println!("ok");
    Ok(())
}

/// `rocectl counter read NAME [INDEX]`: one `INDEX PACKETS BYTES` line per cell.
async fn counter(
    channel: tonic::transport::Channel,
    cmd: CounterCmd,
    p4: &P4Opts,
) -> Result<(), Failure> {
    let CounterCmd::Read { name, index } = cmd;
    let cells = ops::read_counter(channel, p4.device_id, &name, index).await?;
    println!("{:>6} {:>14} {:>16}", "index", "packets", "bytes");
    for c in cells {
        println!("{:>6} {:>14} {:>16}", c.index, c.packets, c.bytes);
    }
    Ok(())
}

async fn run(cli: Cli) -> Result<(), Failure> {
    use proto::roceswitch::fabric::v1::fabric_qos_client::FabricQosClient;
    if let Cmd::Fabric {
        cmd: FabricCmd::Validate { file },
    } = &cli.cmd
    {
        read_config(file)?;
        println!("valid");
        return Ok(());
    }
    if let Cmd::Headroom(a) = &cli.cmd {
        return headroom(a);
    }
    let tls = match &cli.ca {
        Some(ca) => Some(
            control::tls::ClientTlsFiles {
                ca: ca.clone(),
                cert: cli.cert.clone(),
                key: cli.key.clone(),
                domain: cli.tls_domain.clone(),
            }
            .load()?,
        ),
        None => None,
    };
    let channel = control::client::connect_tls(&cli.addr, tls)
        .await
        .map_err(|e| unreachable_daemon(&cli.addr, &e))?;
    match cli.cmd {
        Cmd::Fabric { cmd } => {
            let mut c = FabricQosClient::new(channel.clone());
            match cmd {
                FabricCmd::Get => {
                    let wire = c.get_config(pb::GetConfigRequest {}).await?.into_inner();
                    let cfg = convert::config_from(&wire, &FabricConfig::default());
                    println!("{}", serde_json::to_string_pretty(&cfg).unwrap_or_default());
                }
                FabricCmd::Set { file } => {
                    let cfg = read_config(&file)?;
                    let reply = c.set_config(convert::config_to(&cfg)).await?.into_inner();
                    println!("applied, generation {}", reply.generation);
                }
                FabricCmd::Validate { .. } => unreachable!("handled above"),
                FabricCmd::Counters { port } => {
                    let reply = c
                        .get_counters(pb::CountersRequest { ports: port })
                        .await?
                        .into_inner();
                    println!(
                        "{:>4} {:>4} {:>12} {:>12} {:>12} {:>12} {:>8} {:>8} {:>8} {:>8}",
                        "port",
                        "prio",
                        "rx_pkts",
                        "rx_bytes",
                        "tx_pkts",
                        "tx_bytes",
                        "drops",
                        "pfc_rx",
                        "pfc_tx",
                        "ecn"
                    );
                    for x in reply.counters {
                        println!(
                            "{:>4} {:>4} {:>12} {:>12} {:>12} {:>12} {:>8} {:>8} {:>8} {:>8}",
                            x.port,
                            x.priority,
                            x.rx_packets,
                            x.rx_bytes,
                            x.tx_packets,
                            x.tx_bytes,
                            x.drops,
                            x.pfc_rx_frames,
                            x.pfc_tx_frames,
                            x.ecn_marked
                        );
                    }
                }
                FabricCmd::Events { count, json } => follow_events(channel, count, json).await?,
            }
        }
        Cmd::P4rt { cmd } => {
            let mut c = proto::p4::v1::p4_runtime_client::P4RuntimeClient::new(channel);
            match cmd {
                P4Cmd::Capabilities { device_id } => {
                    let r = c
                        .capabilities(p4pb::CapabilitiesRequest { device_id })
                        .await?
                        .into_inner();
                    println!("{}", r.p4runtime_api_version);
                }
                P4Cmd::Pipeline { device_id } => {
                    let cfg = ops::pipeline_config(&mut c, device_id).await?;
                    match cfg.cookie {
                        Some(c) => println!("cookie {}", c.cookie),
                        None => println!("cookie (none)"),
                    }
                    let info = cfg.p4info.unwrap_or_default();
                    for t in &info.tables {
                        if let Some(p) = &t.preamble {
                            println!("table  {:#010x} {} (size {})", p.id, p.name, t.size);
                        }
                    }
                    for a in &info.actions {
                        if let Some(p) = &a.preamble {
                            println!("action {:#010x} {}", p.id, p.name);
                        }
                    }
                }
            }
        }
        Cmd::Headroom(_) => unreachable!("handled above"),
        Cmd::Dcbx {
            json,
            set,
            system_name,
        } => dcbx(channel, json, set.as_deref(), system_name).await?,
        Cmd::Security { cmd, json } => security(channel, cmd, json).await?,
        Cmd::Watch {
            deadlock: true,
            seconds,
            svg,
            ..
        } => watch_deadlock(channel, seconds, &svg).await?,
        Cmd::Watch { count, json, .. } => follow_events(channel, count, json).await?,
        Cmd::Trace {
            port,
            filter,
            sample,
            count,
            duration,
            json,
        } => {
            let request = trace_request(port, filter, sample, count, duration)?;
            follow_traces(channel, request, json).await?
        }
        Cmd::Top {
            interval,
            once,
            port,
        } => top(channel, interval, once, port).await?,
        Cmd::Counters {
            view,
            port,
            json,
            clear,
            raw,
        } => counters(channel, &cli.addr, view, &port, json, clear, raw).await?,
        Cmd::Table { cmd, p4 } => table(channel, cmd, &p4).await?,
        Cmd::Counter { cmd, p4 } => counter(channel, cmd, &p4).await?,
    }
    Ok(())
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    cli_common::restore_pipe_manners();
    cli_common::handle_doc_flags::<Cli>();
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    match run(Cli::parse()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Server(m)) => {
            eprintln!("error: {m}");
            ExitCode::from(1)
        }
        Err(Failure::Input(m)) => {
            eprintln!("{m}");
            ExitCode::from(2)
        }
    }
}
