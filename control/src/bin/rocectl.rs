//! `rocectl`: command-line client of the roceswitch control plane.
//!
//! `rocectl [--addr unix:/path|HOST:PORT (default 127.0.0.1:9559, or $ROCESWITCH_ADDR)] [--ca F [--cert F --key F]] fabric get|set FILE|validate FILE|counters|events`,
//! `rocectl p4rt capabilities|pipeline`, `rocectl table add|modify|delete|list
//! TABLE [MATCH...] [ACTION [PARAM...]]` and `rocectl counter read NAME [INDEX]`
//! (P4Runtime by name: the names resolve against the P4Info the server
//! returns, any unique dotted suffix will do, see [`p4names`]),
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
        let v: Vec<serde_json::Value> = ports.iter().map(dcbx_json).collect();
        println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
    } else {
        print!("{}", dcbx_table(&ports));
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

/// A PFC enable bitmap as the priorities it enables (`3,4`, or `-`).
fn prio_list(bitmap: u32) -> String {
    let v: Vec<String> = (0..8)
        .filter(|p| bitmap & (1 << p) != 0)
        .map(|p| p.to_string())
        .collect();
    if v.is_empty() {
        "-".into()
    } else {
        v.join(",")
    }
}

fn opt_prio(p: Option<u32>) -> String {
    p.map_or("-".into(), |p| p.to_string())
}

fn dcbx_table(ports: &[pb::DcbxPortStatus]) -> String {
    let mut out = format!(
        "{:>4}  {:<9} {:<8}  {:<24} {:<10} {:>7}  {:<9} {:<8}  {}\n",
        "port", "pfc", "roce", "neighbor", "its port", "willing", "its pfc", "its roce", "mismatch"
    );
    for p in ports {
        let (name, willing, pfc, roce) = if p.has_neighbor {
            let name = if p.neighbor_system_name.is_empty() {
                p.neighbor_chassis.clone()
            } else {
                p.neighbor_system_name.clone()
            };
            (
                name,
                if p.neighbor_willing { "yes" } else { "no" },
                p.neighbor_pfc_enable.map_or("-".into(), prio_list),
                opt_prio(p.neighbor_roce_priority),
            )
        } else {
            ("(none)".into(), "-", "-".into(), "-".into())
        };
        out += &format!(
            "{:>4}  {:<9} {:<8}  {:<24} {:<10} {:>7}  {:<9} {:<8}  {}\n",
            p.port,
            prio_list(p.local_pfc_enable),
            opt_prio(p.local_roce_priority),
            name,
            if p.has_neighbor {
                p.neighbor_port.as_str()
            } else {
                "-"
            },
            willing,
            pfc,
            roce,
            if p.mismatch == "none" {
                "ok"
            } else {
                p.mismatch.as_str()
            },
        );
    }
    out
}

fn dcbx_json(p: &pb::DcbxPortStatus) -> serde_json::Value {
    serde_json::json!({
        "port": p.port,
        "local": {
            "pfc_enable": prio_list(p.local_pfc_enable),
            "roce_priority": p.local_roce_priority,
            "prio_tc": p.local_prio_tc,
        },
        "neighbor": p.has_neighbor.then(|| serde_json::json!({
            "chassis": p.neighbor_chassis,
            "port": p.neighbor_port,
            "system_name": p.neighbor_system_name,
            "willing": p.neighbor_willing,
            "pfc_enable": p.neighbor_pfc_enable.map(prio_list),
            "roce_priority": p.neighbor_roce_priority,
            "prio_tc": p.neighbor_prio_tc,
        })),
        "mismatch": p.mismatch,
        "tx_frames": p.tx_frames,
        "rx_frames": p.rx_frames,
        "rx_discarded": p.rx_discarded,
        "ageouts": p.ageouts,
    })
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
            println!("{}", event_json(&ev));
        } else {
            println!("{}", event_line(&ev));
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

/// `12:03:45.123 watchdog storm: port 4 priority 3` (UTC time of day).
fn event_line(ev: &pb::Event) -> String {
    use pb::event::Kind;
    let what = match &ev.kind {
        Some(Kind::ConfigApplied(c)) => {
            format!(
                "config applied: {} (generation {})",
                c.section, c.generation
            )
        }
        Some(Kind::Storm(s)) => format!(
            "watchdog storm: port {} priority {} (paused past the detection time)",
            s.port, s.priority
        ),
        Some(Kind::Restore(r)) => {
            format!("watchdog restored: port {} priority {}", r.port, r.priority)
        }
        Some(Kind::DcbxMismatch(d)) if d.mismatch == "none" => {
            format!("dcbx: port {} agrees with its neighbour again", d.port)
        }
        Some(Kind::DcbxMismatch(d)) => {
            format!("dcbx mismatch: port {} differs in {}", d.port, d.mismatch)
        }
        Some(Kind::PauseChange(c)) => {
            let what = match (pb::PauseKind::try_from(c.kind), c.active) {
                (Ok(pb::PauseKind::EgressPaused), true) => "paused by its peer",
                (Ok(pb::PauseKind::EgressPaused), false) => "resumed",
                (Ok(pb::PauseKind::IngressXoff), true) => "XOFF sent (ingress full)",
                (Ok(pb::PauseKind::IngressXoff), false) => "XON sent",
                _ => "pause state of an unknown kind",
            };
            format!("pfc: port {} priority {}: {what}", c.port, c.priority)
        }
        Some(Kind::PortOper(o)) => port_oper_sentence(o),
        None => "event of a kind this rocectl does not know".into(),
    };
    let ms_of_day = (ev.timestamp_ns / 1_000_000) % 86_400_000;
    format!(
        "{:02}:{:02}:{:02}.{:03} {what}",
        ms_of_day / 3_600_000,
        ms_of_day / 60_000 % 60,
        ms_of_day / 1000 % 60,
        ms_of_day % 1000
    )
}

/// `port 2 (veth2) down: interface gone` / `port 2 (veth2) up`.
fn port_oper_sentence(o: &pb::PortOper) -> String {
    let port = if o.name.is_empty() {
        format!("port {}", o.port)
    } else {
        format!("port {} ({})", o.port, o.name)
    };
    match (o.up, o.cause.is_empty()) {
        (true, _) => format!("{port} up"),
        (false, true) => format!("{port} down"),
        (false, false) => format!("{port} down: {}", o.cause),
    }
}

/// The event as one JSON object: `timestamp_ns`, `kind` and the kind's fields.
fn event_json(ev: &pb::Event) -> serde_json::Value {
    use pb::event::Kind;
    let (kind, fields) = match &ev.kind {
        Some(Kind::ConfigApplied(c)) => (
            "config_applied",
            serde_json::json!({"generation": c.generation, "section": c.section}),
        ),
        Some(Kind::Storm(s)) => (
            "watchdog_storm",
            serde_json::json!({"port": s.port, "priority": s.priority}),
        ),
        Some(Kind::Restore(r)) => (
            "watchdog_restore",
            serde_json::json!({"port": r.port, "priority": r.priority}),
        ),
        Some(Kind::DcbxMismatch(d)) => (
            "dcbx_mismatch",
            serde_json::json!({"port": d.port, "mismatch": d.mismatch}),
        ),
        Some(Kind::PauseChange(c)) => (
            "pause_change",
            serde_json::json!({
                "port": c.port,
                "priority": c.priority,
                "pause_kind": match pb::PauseKind::try_from(c.kind) {
                    Ok(pb::PauseKind::EgressPaused) => "egress_paused",
                    Ok(pb::PauseKind::IngressXoff) => "ingress_xoff",
                    _ => "unknown",
                },
                "active": c.active,
            }),
        ),
        Some(Kind::PortOper(o)) => (
            "port_oper",
            serde_json::json!({"port": o.port, "name": o.name, "up": o.up, "cause": o.cause}),
        ),
        None => ("unknown", serde_json::json!({})),
    };
    let mut v = serde_json::json!({"timestamp_ns": ev.timestamp_ns, "kind": kind});
    if let (Some(obj), serde_json::Value::Object(extra)) = (v.as_object_mut(), fields) {
        obj.extend(extra);
    }
    v
}

/// One `top` frame. `prev` is the previous sample taken `dt_s` seconds
/// earlier; without it the rate and paused columns show `-`. A (port,
/// priority) is paused when PFC frames arrived for it since the last frame.
fn top_frame(
    prev: Option<&[pb::PriorityCounters]>,
    now: &[pb::PriorityCounters],
    dt_s: f64,
) -> String {
    let mut out = format!(
        "{:>4} {:>4} {:>12} {:>10} {:>10} {:>6} {:>10} {:>10} {:>10}\n",
        "port", "prio", "qdepth_B", "tx_Mbps", "pfc_rx", "paused", "pfc_tx", "ecn", "drops"
    );
    for c in now {
        let before = prev.and_then(|p| {
            p.iter()
                .find(|x| x.port == c.port && x.priority == c.priority)
        });
        let (rate, paused) = match before {
            Some(b) if dt_s > 0.0 => (
                format!(
                    "{:.1}",
                    c.tx_bytes.saturating_sub(b.tx_bytes) as f64 * 8.0 / dt_s / 1e6
                ),
                if c.pfc_rx_frames > b.pfc_rx_frames {
                    "yes"
                } else {
                    "no"
                },
            ),
            _ => ("-".to_string(), "-"),
        };
        out.push_str(&format!(
            "{:>4} {:>4} {:>12} {:>10} {:>10} {:>6} {:>10} {:>10} {:>10}\n",
            c.port,
            c.priority,
            c.queue_depth_bytes,
            rate,
            c.pfc_rx_frames,
            paused,
            c.pfc_tx_frames,
            c.ecn_marked,
            c.drops
        ));
    }
    out
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
            Some((t, p)) => top_frame(Some(p), &now, at.duration_since(*t).as_secs_f64()),
            None => top_frame(None, &now, 0.0),
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

impl From<p4names::NameError> for Failure {
    fn from(e: p4names::NameError) -> Self {
        Failure::Input(e.to_string())
    }
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
                    use p4pb::get_forwarding_pipeline_config_request::ResponseType;
                    let r = c
                        .get_forwarding_pipeline_config(p4pb::GetForwardingPipelineConfigRequest {
                            device_id,
                            response_type: ResponseType::P4infoAndCookie as i32,
                        })
                        .await?
                        .into_inner();
                    let cfg = r.config.unwrap_or_default();
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
        Cmd::Table { cmd, p4 } => p4ops::table(channel, cmd, &p4).await?,
        Cmd::Counter { cmd, p4 } => p4ops::counter(channel, cmd, &p4).await?,
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

/// Names and values of P4 entities as a network engineer types them.
///
/// Contract: names resolve to the one P4Info object whose full name or
/// alias equals the text, or else whose full name ends in `.TEXT` (a dotted
/// suffix); no match or several is an error naming the candidates. Values
/// are `10.0.0.1`, IPv6 literals, `aa:bb:cc:dd:ee:ff`, `0x..` or decimal,
/// encoded as canonical P4Runtime byte strings (big-endian, shortest, one
/// byte for zero) after checking they fit the field's bitwidth. Match
/// syntax by kind: exact `V`, LPM `V/LEN`, ternary `V&&&MASK`, range
/// `LO..HI`, optional `V`; `*` leaves a non-exact field out (don't care).
mod p4names {
    use proto::p4::config::v1 as cfg;
    use proto::p4::config::v1::match_field::MatchType;
    use proto::p4::v1 as p4pb;

    /// Why a name or a value was not understood.
    #[derive(Debug, thiserror::Error)]
    pub(crate) enum NameError {
        /// Nothing of that kind has this name.
        #[error("no {kind} named {name:?} (known: {known})")]
        Unknown {
            kind: &'static str,
            name: String,
            known: String,
        },
        /// Several objects end in this suffix.
        #[error("{kind} name {name:?} is ambiguous: {candidates}")]
        Ambiguous {
            kind: &'static str,
            name: String,
            candidates: String,
        },
        /// A value that does not parse or does not fit.
        #[error("{what}: {why}")]
        BadValue { what: String, why: String },
    }

    fn bad(what: &str, why: impl Into<String>) -> NameError {
        NameError::BadValue {
            what: what.to_string(),
            why: why.into(),
        }
    }

    /// The one of `items` (named by `name_of` as (full name, alias)) that `text` names.
    pub(crate) fn resolve<'a, T>(
        kind: &'static str,
        text: &str,
        items: &'a [T],
        name_of: impl Fn(&T) -> (&str, &str),
    ) -> Result<&'a T, NameError> {
        if let Some(t) = items.iter().find(|t| {
            let (full, alias) = name_of(t);
            full == text || (!alias.is_empty() && alias == text)
        }) {
            return Ok(t);
        }
        let suffix = format!(".{text}");
        let hits: Vec<&T> = items
            .iter()
            .filter(|t| name_of(t).0.ends_with(&suffix))
            .collect();
        match hits.as_slice() {
            [one] => Ok(one),
            [] => Err(NameError::Unknown {
                kind,
                name: text.to_string(),
                known: items
                    .iter()
                    .map(|t| name_of(t).0)
                    .collect::<Vec<_>>()
                    .join(", "),
            }),
            many => Err(NameError::Ambiguous {
                kind,
                name: text.to_string(),
                candidates: many
                    .iter()
                    .map(|t| name_of(t).0)
                    .collect::<Vec<_>>()
                    .join(", "),
            }),
        }
    }

    fn preamble_names(p: &Option<cfg::Preamble>) -> (&str, &str) {
        p.as_ref()
            .map(|p| (p.name.as_str(), p.alias.as_str()))
            .unwrap_or(("", ""))
    }

    /// Table `text` of `info`.
    pub(crate) fn table<'a>(
        info: &'a cfg::P4Info,
        text: &str,
    ) -> Result<&'a cfg::Table, NameError> {
        resolve("table", text, &info.tables, |t| preamble_names(&t.preamble))
    }

    /// Action `text` among the actions `table` may use.
    pub(crate) fn action<'a>(
        info: &'a cfg::P4Info,
        table: &cfg::Table,
        text: &str,
    ) -> Result<&'a cfg::Action, NameError> {
        let allowed: Vec<cfg::Action> = info
            .actions
            .iter()
            .filter(|a| {
                let id = a.preamble.as_ref().map_or(0, |p| p.id);
                table.action_refs.iter().any(|r| r.id == id)
            })
            .cloned()
            .collect();
        let hit = resolve("action", text, &allowed, |a| preamble_names(&a.preamble))?;
        let id = hit.preamble.as_ref().map_or(0, |p| p.id);
        info.actions
            .iter()
            .find(|a| a.preamble.as_ref().map_or(0, |p| p.id) == id)
            .ok_or_else(|| bad(text, "action vanished"))
    }

    /// Counter `text` of `info`.
    pub(crate) fn counter<'a>(
        info: &'a cfg::P4Info,
        text: &str,
    ) -> Result<&'a cfg::Counter, NameError> {
        resolve("counter", text, &info.counters, |c| {
            preamble_names(&c.preamble)
        })
    }

    /// Parses an unsigned value (IPv4, IPv6, MAC, `0x` hex or decimal).
    pub(crate) fn value(text: &str, bitwidth: i32, what: &str) -> Result<u128, NameError> {
        let v = if let Ok(a) = text.parse::<std::net::Ipv4Addr>() {
            u128::from(u32::from(a))
        } else if let Ok(a) = text.parse::<std::net::Ipv6Addr>() {
            u128::from(a)
        } else if text.len() == 17 && text.split(':').count() == 6 {
            let mut v = 0u128;
            for part in text.split(':') {
                let b = u8::from_str_radix(part, 16)
                    .map_err(|_| bad(what, format!("bad MAC address {text:?}")))?;
                v = (v << 8) | u128::from(b);
            }
            v
        } else if let Some(hex) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
            u128::from_str_radix(hex, 16)
                .map_err(|e| bad(what, format!("bad hex value {text:?}: {e}")))?
        } else {
            text.parse::<u128>()
                .map_err(|e| bad(what, format!("bad value {text:?}: {e}")))?
        };
        if bitwidth <= 0 || (bitwidth < 128 && v >> bitwidth != 0) {
            return Err(bad(what, format!("{text} does not fit in {bitwidth} bits")));
        }
        Ok(v)
    }

    /// Canonical P4Runtime byte string of `v`.
    pub(crate) fn bytes(v: u128) -> Vec<u8> {
        let all = v.to_be_bytes();
        let first = all.iter().position(|&b| b != 0).unwrap_or(15);
        all[first..].to_vec()
    }

    fn decode(b: &[u8]) -> u128 {
        b.iter()
            .rev()
            .take(16)
            .rev()
            .fold(0u128, |acc, &x| (acc << 8) | u128::from(x))
    }

    fn mask_of(bitwidth: i32) -> u128 {
        if bitwidth >= 128 {
            u128::MAX
        } else {
            (1u128 << bitwidth) - 1
        }
    }

    /// `b` as an engineer reads a field of `bitwidth` bits.
    pub(crate) fn show(b: &[u8], bitwidth: i32) -> String {
        let v = decode(b);
        match bitwidth {
            32 => std::net::Ipv4Addr::from(v as u32).to_string(),
            48 => {
                let o = (v as u64).to_be_bytes();
                o[2..]
                    .iter()
                    .map(|x| format!("{x:02x}"))
                    .collect::<Vec<_>>()
                    .join(":")
            }
            128 => std::net::Ipv6Addr::from(v).to_string(),
            w if w <= 16 => v.to_string(),
            _ => format!("{v:#x}"),
        }
    }

    /// The match kind of `f`.
    pub(crate) fn kind(f: &cfg::MatchField) -> MatchType {
        match &f.r#match {
            Some(cfg::match_field::Match::MatchType(t)) => {
                MatchType::try_from(*t).unwrap_or(MatchType::Unspecified)
            }
            _ => MatchType::Unspecified,
        }
    }

    /// The field match `text` means for `f`, or None for a don't-care `*`.
    pub(crate) fn field_match(
        f: &cfg::MatchField,
        text: &str,
    ) -> Result<Option<p4pb::FieldMatch>, NameError> {
        use p4pb::field_match::FieldMatchType as M;
        let what = f.name.as_str();
        let w = f.bitwidth;
        let k = kind(f);
        if text == "*" {
            return if k == MatchType::Exact {
                Err(bad(what, "an exact field cannot be left out"))
            } else {
                Ok(None)
            };
        }
        let m = match k {
            MatchType::Exact => M::Exact(p4pb::field_match::Exact {
                value: bytes(value(text, w, what)?),
            }),
            MatchType::Optional => M::Optional(p4pb::field_match::Optional {
                value: bytes(value(text, w, what)?),
            }),
            MatchType::Lpm => {
                let (v, len) = match text.split_once('/') {
                    Some((v, l)) => (
                        value(v, w, what)?,
                        l.parse::<i32>()
                            .ok()
                            .filter(|l| (0..=w).contains(l))
                            .ok_or_else(|| bad(what, format!("bad prefix length {l:?}")))?,
                    ),
                    None => (value(text, w, what)?, w),
                };
                if len == 0 {
                    return Ok(None);
                }
                let keep = mask_of(w) & !mask_of(w - len);
                M::Lpm(p4pb::field_match::Lpm {
                    value: bytes(v & keep),
                    prefix_len: len,
                })
            }
            MatchType::Ternary => {
                let (v, m) = match text.split_once("&&&") {
                    Some((v, m)) => (value(v, w, what)?, value(m, w, what)?),
                    None => (value(text, w, what)?, mask_of(w)),
                };
                if m == 0 {
                    return Ok(None);
                }
                M::Ternary(p4pb::field_match::Ternary {
                    value: bytes(v & m),
                    mask: bytes(m),
                })
            }
            MatchType::Range => {
                let (lo, hi) = match text.split_once("..") {
                    Some((lo, hi)) => (value(lo, w, what)?, value(hi, w, what)?),
                    None => {
                        let v = value(text, w, what)?;
                        (v, v)
                    }
                };
                if lo > hi {
                    return Err(bad(what, format!("empty range {text}")));
                }
                if lo == 0 && hi == mask_of(w) {
                    return Ok(None);
                }
                M::Range(p4pb::field_match::Range {
                    low: bytes(lo),
                    high: bytes(hi),
                })
            }
            MatchType::Unspecified => {
                return Err(bad(what, "match kind not supported by rocectl"));
            }
        };
        Ok(Some(p4pb::FieldMatch {
            field_id: f.id,
            field_match_type: Some(m),
        }))
    }

    /// One field match as text (`10.0.0.0/24`, `0x6&&&0xff`, `1..2`).
    pub(crate) fn show_match(f: &cfg::MatchField, m: &p4pb::FieldMatch) -> String {
        use p4pb::field_match::FieldMatchType as M;
        let w = f.bitwidth;
        match &m.field_match_type {
            Some(M::Exact(e)) => show(&e.value, w),
            Some(M::Optional(e)) => show(&e.value, w),
            Some(M::Lpm(l)) => format!("{}/{}", show(&l.value, w), l.prefix_len),
            Some(M::Ternary(t)) => format!("{:#x}&&&{:#x}", decode(&t.value), decode(&t.mask)),
            Some(M::Range(r)) => format!("{}..{}", show(&r.low, w), show(&r.high, w)),
            _ => "?".to_string(),
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        fn field(name: &str, bitwidth: i32, t: MatchType) -> cfg::MatchField {
            cfg::MatchField {
                id: 1,
                name: name.to_string(),
                bitwidth,
                r#match: Some(cfg::match_field::Match::MatchType(t as i32)),
                ..Default::default()
            }
        }

        #[test]
        fn values_parse_by_literal_kind_and_must_fit() {
            assert_eq!(value("10.0.0.1", 32, "f").unwrap(), 0x0a00_0001);
            assert_eq!(
                value("00:11:22:33:44:55", 48, "f").unwrap(),
                0x0011_2233_4455
            );
            assert_eq!(value("::1", 128, "f").unwrap(), 1);
            assert_eq!(value("0x1ff", 9, "f").unwrap(), 511);
            assert_eq!(value("300", 9, "f").unwrap(), 300);
            assert!(value("512", 9, "f").is_err());
            assert!(value("10.0.0.1", 16, "f").is_err());
            assert!(value("ten", 16, "f").is_err());
            assert_eq!(bytes(0), vec![0]);
            assert_eq!(bytes(0x0a00_0000), vec![10, 0, 0, 0]);
        }

        #[test]
        fn matches_by_kind() {
            use p4pb::field_match::FieldMatchType as M;
            let lpm = field("hdr.ipv4.dstAddr", 32, MatchType::Lpm);
            let m = field_match(&lpm, "10.0.0.7/24").unwrap().unwrap();
            assert_eq!(
                m.field_match_type,
                Some(M::Lpm(p4pb::field_match::Lpm {
                    value: vec![10, 0, 0, 0],
                    prefix_len: 24
                })),
                "host bits are cleared"
            );
            assert_eq!(show_match(&lpm, &m), "10.0.0.0/24");
            assert!(field_match(&lpm, "10.0.0.0/33").is_err());
            let t = field("hdr.ipv4.protocol", 8, MatchType::Ternary);
            let m = field_match(&t, "0x11&&&0xf0").unwrap().unwrap();
            assert_eq!(
                m.field_match_type,
                Some(M::Ternary(p4pb::field_match::Ternary {
                    value: vec![0x10],
                    mask: vec![0xf0]
                }))
            );
            let r = field("meta.l4_dport", 16, MatchType::Range);
            let m = field_match(&r, "1000..2000").unwrap().unwrap();
            assert_eq!(show_match(&r, &m), "1000..2000");
            assert!(field_match(&r, "9..1").is_err());
            assert!(field_match(&r, "*").unwrap().is_none());
            let e = field("meta.nhop_group", 16, MatchType::Exact);
            assert!(field_match(&e, "*").is_err());
        }

        #[test]
        fn names_resolve_by_full_alias_or_unique_suffix() {
            let names = ["MyIngress.ipv4_lpm", "MyIngress.acl", "MyEgress.acl"];
            fn f<'a>(n: &'a &str) -> (&'a str, &'a str) {
                (n, "")
            }
            assert_eq!(*resolve("table", "ipv4_lpm", &names, f).unwrap(), names[0]);
            assert_eq!(
                *resolve("table", "MyEgress.acl", &names, f).unwrap(),
                names[2]
            );
            assert!(matches!(
                resolve("table", "acl", &names, f),
                Err(NameError::Ambiguous { .. })
            ));
            assert!(matches!(
                resolve("table", "lpm", &names, f),
                Err(NameError::Unknown { .. })
            ));
        }
    }
}

/// The P4Runtime exchanges of `table` and `counter`: fetch the P4Info,
/// become primary on a StreamChannel (kept open until the Write is done),
/// Write or Read, print.
mod p4ops {
    use proto::p4::config::v1 as cfg;
    use proto::p4::v1 as p4pb;
    use proto::p4::v1::p4_runtime_client::P4RuntimeClient;
    use tonic::transport::Channel;

    use super::p4names;
    use super::{CounterCmd, EntryArgs, Failure, P4Opts, TableCmd};

    async fn p4info(
        c: &mut P4RuntimeClient<Channel>,
        device_id: u64,
    ) -> Result<cfg::P4Info, Failure> {
        use p4pb::get_forwarding_pipeline_config_request::ResponseType;
        let r = c
            .get_forwarding_pipeline_config(p4pb::GetForwardingPipelineConfigRequest {
                device_id,
                response_type: ResponseType::P4infoAndCookie as i32,
            })
            .await?
            .into_inner();
        r.config
            .and_then(|c| c.p4info)
            .ok_or_else(|| Failure::Server("the device has no pipeline loaded".to_string()))
    }

    fn wire(v: u128) -> p4pb::Uint128 {
        p4pb::Uint128 {
            high: (v >> 64) as u64,
            low: v as u64,
        }
    }

    /// An open StreamChannel on which this client is primary.
    struct Primary {
        _tx: tokio::sync::mpsc::Sender<p4pb::StreamMessageRequest>,
        _rx: tonic::Streaming<p4pb::StreamMessageResponse>,
    }

    async fn become_primary(
        c: &mut P4RuntimeClient<Channel>,
        p4: &P4Opts,
    ) -> Result<Primary, Failure> {
        let (tx, rx) = tokio::sync::mpsc::channel(4);
        let hello = p4pb::StreamMessageRequest {
            update: Some(p4pb::stream_message_request::Update::Arbitration(
                p4pb::MasterArbitrationUpdate {
                    device_id: p4.device_id,
                    election_id: Some(wire(p4.election_id)),
                    ..Default::default()
                },
            )),
        };
        tx.send(hello)
            .await
            .map_err(|_| Failure::Server("stream closed".to_string()))?;
        let mut stream = c
            .stream_channel(tokio_stream::wrappers::ReceiverStream::new(rx))
            .await?
            .into_inner();
        loop {
            let msg = tokio::time::timeout(std::time::Duration::from_secs(10), stream.message())
                .await
                .map_err(|_| Failure::Server("no arbitration reply within 10 s".to_string()))??;
            match msg.and_then(|m| m.update) {
                Some(p4pb::stream_message_response::Update::Arbitration(a)) => {
                    let code = a.status.as_ref().map_or(0, |s| s.code);
                    if code != 0 {
                        return Err(Failure::Server(format!(
                            "not primary with election id {} (another controller holds a higher one)",
                            p4.election_id
                        )));
                    }
                    return Ok(Primary {
                        _tx: tx,
                        _rx: stream,
                    });
                }
                Some(_) => continue,
                None => {
                    return Err(Failure::Server(
                        "stream ended during arbitration".to_string(),
                    ));
                }
            }
        }
    }

    fn entry(
        info: &cfg::P4Info,
        a: &EntryArgs,
        with_action: bool,
    ) -> Result<p4pb::TableEntry, Failure> {
        let t = p4names::table(info, &a.table)?;
        let nfields = t.match_fields.len();
        if a.args.len() < nfields {
            return Err(Failure::Input(format!(
                "{} needs {} match value(s) ({}), got {}",
                a.table,
                nfields,
                t.match_fields
                    .iter()
                    .map(|f| f.name.as_str())
                    .collect::<Vec<_>>()
                    .join(" "),
                a.args.len()
            )));
        }
        let mut matches = Vec::new();
        for (f, text) in t.match_fields.iter().zip(&a.args) {
            if let Some(m) = p4names::field_match(f, text)? {
                matches.push(m);
            }
        }
        let rest = &a.args[nfields..];
        let action = if with_action {
            let Some((name, params)) = rest.split_first() else {
                return Err(Failure::Input(format!("{}: missing action", a.table)));
            };
            let act = p4names::action(info, t, name)?;
            if params.len() != act.params.len() {
                return Err(Failure::Input(format!(
                    "{name} takes {} parameter(s) ({}), got {}",
                    act.params.len(),
                    act.params
                        .iter()
                        .map(|p| p.name.as_str())
                        .collect::<Vec<_>>()
                        .join(" "),
                    params.len()
                )));
            }
            let mut out = Vec::new();
            for (p, text) in act.params.iter().zip(params) {
                let v = p4names::value(text, p.bitwidth, &p.name)?;
                out.push(p4pb::action::Param {
                    param_id: p.id,
                    value: p4names::bytes(v),
                });
            }
            Some(p4pb::TableAction {
                r#type: Some(p4pb::table_action::Type::Action(p4pb::Action {
                    action_id: act.preamble.as_ref().map_or(0, |p| p.id),
                    params: out,
                })),
            })
        } else {
            if !rest.is_empty() {
                return Err(Failure::Input(format!(
                    "delete takes only match values; unexpected {:?}",
                    rest.join(" ")
                )));
            }
            None
        };
        let needs_priority = t.match_fields.iter().any(|f| {
            use cfg::match_field::MatchType as K;
            matches!(p4names::kind(f), K::Ternary | K::Range | K::Optional)
        });
        let priority = match (needs_priority, a.priority) {
            (true, Some(p)) if p > 0 => p,
            (true, _) => {
                return Err(Failure::Input(format!(
                    "{} has ternary/range/optional keys: --priority N (N > 0) is required",
                    a.table
                )));
            }
            (false, Some(p)) if p != 0 => {
                return Err(Failure::Input(format!(
                    "{} has only exact/LPM keys: no --priority",
                    a.table
                )));
            }
            (false, _) => 0,
        };
        Ok(p4pb::TableEntry {
            table_id: t.preamble.as_ref().map_or(0, |p| p.id),
            r#match: matches,
            action,
            priority,
            ..Default::default()
        })
    }

    fn show_entry(info: &cfg::P4Info, t: &cfg::Table, e: &p4pb::TableEntry) -> String {
        let mut words = Vec::new();
        for f in &t.match_fields {
            match e.r#match.iter().find(|m| m.field_id == f.id) {
                Some(m) => words.push(p4names::show_match(f, m)),
                None => words.push("*".to_string()),
            }
        }
        match e.action.as_ref().and_then(|a| a.r#type.as_ref()) {
            Some(p4pb::table_action::Type::Action(a)) => {
                let act = info
                    .actions
                    .iter()
                    .find(|x| x.preamble.as_ref().map_or(0, |p| p.id) == a.action_id);
                let name = act
                    .and_then(|x| x.preamble.as_ref())
                    .map_or_else(|| format!("{:#x}", a.action_id), |p| p.name.clone());
                words.push(name);
                for p in &a.params {
                    let w = act
                        .and_then(|x| x.params.iter().find(|q| q.id == p.param_id))
                        .map_or(128, |q| q.bitwidth);
                    words.push(p4names::show(&p.value, w));
                }
            }
            Some(other) => words.push(format!("{other:?}")),
            None => words.push("(no action)".to_string()),
        }
        if e.priority != 0 {
            words.push(format!("--priority {}", e.priority));
        }
        words.join(" ")
    }

    async fn read_all(
        c: &mut P4RuntimeClient<Channel>,
        device_id: u64,
        e: p4pb::entity::Entity,
    ) -> Result<Vec<p4pb::Entity>, Failure> {
        let mut stream = c
            .read(p4pb::ReadRequest {
                device_id,
                entities: vec![p4pb::Entity { entity: Some(e) }],
                ..Default::default()
            })
            .await?
            .into_inner();
        let mut out = Vec::new();
        while let Some(r) = stream.message().await? {
            out.extend(r.entities);
        }
        Ok(out)
    }

    /// `rocectl table ...`.
    pub(crate) async fn table(channel: Channel, cmd: TableCmd, p4: &P4Opts) -> Result<(), Failure> {
        use p4pb::update::Type;
        let mut c = P4RuntimeClient::new(channel);
        let info = p4info(&mut c, p4.device_id).await?;
        let (ty, args) = match cmd {
            TableCmd::List { table } => {
                let t = p4names::table(&info, &table)?;
                let id = t.preamble.as_ref().map_or(0, |p| p.id);
                let ents = read_all(
                    &mut c,
                    p4.device_id,
                    p4pb::entity::Entity::TableEntry(p4pb::TableEntry {
                        table_id: id,
                        ..Default::default()
                    }),
                )
                .await?;
                for e in ents {
                    if let Some(p4pb::entity::Entity::TableEntry(te)) = e.entity
                        && !te.is_default_action
                    {
                        println!("{}", show_entry(&info, t, &te));
                    }
                }
                return Ok(());
            }
            TableCmd::Add(a) => (Type::Insert, a),
            TableCmd::Modify(a) => (Type::Modify, a),
            TableCmd::Delete(a) => (Type::Delete, a),
        };
        let te = entry(&info, &args, ty != Type::Delete)?;
        let _primary = become_primary(&mut c, p4).await?;
        c.write(p4pb::WriteRequest {
            device_id: p4.device_id,
            election_id: Some(wire(p4.election_id)),
            updates: vec![p4pb::Update {
                r#type: ty as i32,
                entity: Some(p4pb::Entity {
                    entity: Some(p4pb::entity::Entity::TableEntry(te)),
                }),
            }],
            ..Default::default()
        })
        .await?;
        println!("ok");
        Ok(())
    }

    /// `rocectl counter read NAME [INDEX]`: one `INDEX PACKETS BYTES` line per cell.
    pub(crate) async fn counter(
        channel: Channel,
        cmd: CounterCmd,
        p4: &P4Opts,
    ) -> Result<(), Failure> {
        let CounterCmd::Read { name, index } = cmd;
        let mut c = P4RuntimeClient::new(channel);
        let info = p4info(&mut c, p4.device_id).await?;
        let ctr = p4names::counter(&info, &name)?;
        if let Some(i) = index
            && (i < 0 || i >= ctr.size)
        {
            return Err(Failure::Input(format!(
                "{name}: index {i} outside 0..{}",
                ctr.size
            )));
        }
        let ents = read_all(
            &mut c,
            p4.device_id,
            p4pb::entity::Entity::CounterEntry(p4pb::CounterEntry {
                counter_id: ctr.preamble.as_ref().map_or(0, |p| p.id),
                index: index.map(|i| p4pb::Index { index: i }),
                ..Default::default()
            }),
        )
        .await?;
        println!("{:>6} {:>14} {:>16}", "index", "packets", "bytes");
        for e in ents {
            if let Some(p4pb::entity::Entity::CounterEntry(ce)) = e.entity {
                let d = ce.data.unwrap_or_default();
                println!(
                    "{:>6} {:>14} {:>16}",
                    ce.index.map_or(0, |i| i.index),
                    d.packet_count,
                    d.byte_count
                );
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod top_tests {
    use super::*;

    #[test]
    fn second_frame_shows_tx_rate_and_paused_from_deltas() {
        let before = pb::PriorityCounters {
            port: 1,
            priority: 3,
            tx_bytes: 1_000_000,
            pfc_rx_frames: 4,
            ..Default::default()
        };
        let quiet = pb::PriorityCounters {
            port: 1,
            priority: 0,
            ..Default::default()
        };
        let mut after = before;
        after.tx_bytes += 12_500_000; // 100 Mb in 0.5 s = 200 Mb/s
        after.pfc_rx_frames += 1;
        let frame = top_frame(Some(&[before, quiet]), &[quiet, after], 0.5);
        let rows: Vec<Vec<&str>> = frame
            .lines()
            .skip(1)
            .map(|l| l.split_whitespace().collect())
            .collect();
        assert_eq!(rows[0][..6], ["1", "0", "0", "0.0", "0", "no"]);
        assert_eq!(rows[1][..6], ["1", "3", "0", "200.0", "5", "yes"]);
    }
}

#[cfg(test)]
mod dcbx_tests {
    use super::*;

    #[test]
    fn the_table_names_the_neighbour_and_what_differs() {
        let ports = vec![
            pb::DcbxPortStatus {
                port: 1,
                local_pfc_enable: 1 << 3,
                local_roce_priority: Some(3),
                has_neighbor: true,
                neighbor_chassis: "02:00:00:00:00:02".into(),
                neighbor_port: "02:00:00:00:00:02".into(),
                neighbor_pfc_enable: Some(1 << 4),
                neighbor_roce_priority: Some(4),
                mismatch: "pfc,app".into(),
                ..Default::default()
            },
            pb::DcbxPortStatus {
                port: 2,
                local_pfc_enable: 1 << 3,
                local_roce_priority: Some(3),
                mismatch: "none".into(),
                ..Default::default()
            },
        ];
        let t = dcbx_table(&ports);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 3);
        let one: Vec<&str> = lines[1].split_whitespace().collect();
        assert_eq!(one[0..3], ["1", "3", "3"]);
        assert!(one.contains(&"4") && one.ends_with(&["pfc,app"]));
        assert!(lines[2].contains("(none)") && lines[2].ends_with("ok"));
        let j = dcbx_json(&ports[0]);
        assert_eq!(j["neighbor"]["pfc_enable"], "4");
        assert_eq!(j["mismatch"], "pfc,app");
    }
}
