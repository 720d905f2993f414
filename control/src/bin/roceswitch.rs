//! `roceswitch`: the switch daemon.
//!
//! Runs `roce_switch.p4` (compiled in) and the traffic manager on Linux
//! interfaces (veth in labs) and serves P4Runtime plus the fabric QoS
//! service over gRPC. One thread drives the dataplane; a tokio runtime
//! serves gRPC; they meet only through the driver's command channel.
//!
//! ```text
//! roceswitch --port 0=veth0 --port 1=veth1 --speed 10G --grpc 127.0.0.1:9559
//! roceswitch --config switch.toml
//! ```

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{Context, Result, bail};
use clap::Parser;
use control::fabric::{FABRIC_OWNED_TABLES, FabricBackend, FabricService, P4TablesBackend};
use control::p4rt::{P4RuntimeConfig, P4RuntimeService};
use control::serve::{Bound, Listen};
use control::switchdev::{SwitchDevice, TmBackend};
use dataplane::driver::{Command, Driver, DriverIo};
use dataplane::port::{AfPacketPort, Port};
use dataplane::roce::{P4INFO_BINARY, PROGRAM_INFO, Program};
use dataplane::switch::{Switch, SwitchConfig, SwitchDrop};
use dataplane::time::Instant;
use dataplane::wire::ethernet::EthernetAddress;
use prost::Message as _;
use serde::Deserialize;

#[derive(Parser, Debug)]
#[command(
    version,
    about = "RoCEv2 lossless-Ethernet software switch: roce_switch.p4 + traffic manager + P4Runtime"
)]
struct Cli {
    /// TOML configuration (ports, gRPC address, ...); flags override it.
    #[arg(long)]
    config: Option<PathBuf>,
    /// A port: `NUMBER=INTERFACE` (numbers 0..N-1, each once).
    #[arg(long = "port", value_name = "N=IFACE")]
    ports: Vec<String>,
    /// Default port speed (shaper and pause timing): 10G, 25G, 100G, 400M ...
    #[arg(long)]
    speed: Option<String>,
    /// gRPC listen address: HOST:PORT or unix:/path.
    #[arg(long)]
    grpc: Option<String>,
    /// P4Runtime device id.
    #[arg(long)]
    device_id: Option<u64>,
    /// CPU port number (PacketIn/PacketOut).
    #[arg(long)]
    cpu_port: Option<u16>,
    /// Fabric configuration state file (restored at start, saved on change).
    #[arg(long)]
    state_file: Option<PathBuf>,
    /// Log filter (tracing-subscriber env-filter syntax).
    #[arg(long, default_value = "info")]
    log_level: String,
}

/// The TOML configuration file.
#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
struct FileConfig {
    grpc: Option<String>,
    device_id: Option<u64>,
    cpu_port: Option<u16>,
    state_file: Option<PathBuf>,
    speed: Option<String>,
    #[serde(default, rename = "port")]
    ports: Vec<FilePort>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct FilePort {
    number: u16,
    iface: String,
    speed: Option<String>,
    mtu: Option<u32>,
    cable_m: Option<u32>,
    /// PFC-enabled priorities (default: 3).
    lossless: Option<Vec<u8>>,
}

/// `10G`, `25g`, `400M`, `1000000000` → bits per second.
fn parse_speed(s: &str) -> Result<u64> {
    let s = s.trim();
    let (num, mult) = match s.chars().last() {
        Some('G' | 'g') => (&s[..s.len() - 1], 1_000_000_000),
        Some('M' | 'm') => (&s[..s.len() - 1], 1_000_000),
        Some('K' | 'k') => (&s[..s.len() - 1], 1_000),
        _ => (s, 1),
    };
    let v: f64 = num
        .parse()
        .with_context(|| format!("bad speed {s:?} (try 10G, 25G, 100G)"))?;
    if v <= 0.0 {
        bail!("speed {s:?} must be positive");
    }
    Ok((v * mult as f64) as u64)
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_new(&cli.log_level).context("--log-level")?,
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();

    let file: FileConfig = match &cli.config {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading {}", path.display()))?;
            toml::from_str(&text).with_context(|| format!("parsing {}", path.display()))?
        }
        None => FileConfig::default(),
    };
    let default_speed = parse_speed(
        cli.speed
            .as_deref()
            .or(file.speed.as_deref())
            .unwrap_or("10G"),
    )
    .context("--speed")?;
    let mut ports: BTreeMap<u16, FilePort> = BTreeMap::new();
    for p in file.ports {
        if ports.insert(p.number, p).is_some() {
            bail!("port numbers must be unique in the config file");
        }
    }
    for spec in &cli.ports {
        let (n, iface) = spec
            .split_once('=')
            .with_context(|| format!("--port {spec:?}: expected NUMBER=INTERFACE"))?;
        let number: u16 = n
            .parse()
            .with_context(|| format!("--port {spec:?}: bad port number"))?;
        ports.insert(
            number,
            FilePort {
                number,
                iface: iface.to_string(),
                speed: None,
                mtu: None,
                cable_m: None,
                lossless: None,
            },
        );
    }
    if ports.is_empty() {
        bail!("no ports: give --port N=IFACE (or [[port]] in --config)");
    }
    for (i, n) in ports.keys().enumerate() {
        if usize::from(*n) != i {
            bail!(
                "port numbers must be 0..{} without gaps (missing {i})",
                ports.len()
            );
        }
    }
    let cpu_port = cli
        .cpu_port
        .or(file.cpu_port)
        .unwrap_or(dataplane::roce::CPU_PORT);
    let listen: Listen = cli
        .grpc
        .as_deref()
        .or(file.grpc.as_deref())
        .unwrap_or("127.0.0.1:9559")
        .parse()
        .context("--grpc: expected HOST:PORT or unix:/path")?;
    let device_id = cli.device_id.or(file.device_id).unwrap_or(1);
    let state_file = cli.state_file.or(file.state_file);

    // Ports and traffic manager.
    let mut config = SwitchConfig::with_ports(ports.len());
    config.cpu_port = cpu_port;
    let mut opened: Vec<Box<dyn Port + Send>> = Vec::new();
    for (n, p) in &ports {
        let port = AfPacketPort::open(&p.iface)
            .with_context(|| format!("opening port {n} ({})", p.iface))?;
        let tm_port = &mut config.tm.ports[usize::from(*n)];
        tm_port.speed_bps = match &p.speed {
            Some(s) => parse_speed(s).with_context(|| format!("port {n} speed"))?,
            None => default_speed,
        };
        tm_port.mac = EthernetAddress([0x02, 0x52, 0x53, 0x57, (n >> 8) as u8, *n as u8]);
        if let Some(mtu) = p.mtu {
            tm_port.mtu_bytes = mtu;
        }
        if let Some(cable) = p.cable_m {
            tm_port.cable_length_m = Some(cable);
        }
        if let Some(l) = &p.lossless {
            tm_port.pfc_enable = l.iter().fold(0, |m, &prio| m | (1u8 << (prio & 7)));
        }
        tracing::info!(port = n, iface = %p.iface, speed_bps = tm_port.speed_bps, "port up");
        opened.push(Box::new(port));
    }
    let base_tm = config.tm.clone();
    let switch = Switch::new(Program::new(), config, Instant::ZERO)
        .context("traffic manager configuration")?;

    // The dataplane thread.
    let (cmd_tx, cmd_rx) = std::sync::mpsc::channel::<Command<Program>>();
    let (pin_tx, _) = tokio::sync::broadcast::channel::<Vec<u8>>(1024);
    let pin = pin_tx.clone();
    let io = DriverIo {
        commands: cmd_rx,
        packet_in: Some(Box::new(move |frame| {
            let _ = pin.send(frame);
        })),
        events: Some(Box::new(|event| {
            tracing::info!(?event, "traffic manager event")
        })),
    };
    let stop = Arc::new(AtomicBool::new(false));
    let dataplane = {
        let stop = stop.clone();
        std::thread::Builder::new().name("dataplane".into()).spawn(
            move || -> Result<Switch<Program>> {
                let mut driver = Driver::new(switch, opened, io);
                driver.run(&stop).context("dataplane")?;
                let stats = driver.stats();
                tracing::info!(?stats, "dataplane stopped");
                Ok(driver.into_switch())
            },
        )?
    };

    // The control plane.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .context("tokio runtime")?;
    let served = runtime.block_on(async {
        let device = Arc::new(SwitchDevice::new(cmd_tx.clone(), pin_tx));
        let p4info =
            proto::p4::config::v1::P4Info::decode(P4INFO_BINARY).context("compiled P4Info")?;
        let p4rt_config = P4RuntimeConfig {
            device_id,
            owned_tables: FABRIC_OWNED_TABLES
                .iter()
                .map(|t| (t.to_string(), "fabric".to_string()))
                .collect(),
            ..Default::default()
        };
        let p4rt = P4RuntimeService::new(&PROGRAM_INFO, p4info, device.clone(), p4rt_config)
            .context("P4Runtime service")?;
        let tables = P4TablesBackend::new(&PROGRAM_INFO, device).context("fabric P4 tables")?;
        let backend: Arc<dyn FabricBackend> =
            Arc::new(control::fabric::backend::ChainBackend::new(vec![
                Arc::new(TmBackend::new(cmd_tx.clone(), base_tm)) as Arc<dyn FabricBackend>,
                Arc::new(tables),
            ]));
        let fabric = FabricService::open(backend, state_file).context("fabric QoS service")?;
        let bound = Bound::bind(&listen)
            .await
            .with_context(|| format!("gRPC listen on {listen:?}"))?;
        tracing::info!(
            ?listen,
            device_id,
            cpu_port,
            "serving P4Runtime and fabric QoS"
        );
        let shutdown = async {
            let mut term =
                tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
                    .expect("SIGTERM handler");
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {},
                _ = term.recv() => {},
            }
            tracing::info!("shutting down");
        };
        bound
            .serve(Some(p4rt), Some(fabric), shutdown)
            .await
            .context("gRPC server")
    });
    stop.store(true, Ordering::Relaxed);
    drop(cmd_tx);
    let switch = dataplane
        .join()
        .map_err(|_| anyhow::anyhow!("dataplane thread panicked"))??;
    let stats = switch.stats();
    for reason in SwitchDrop::ALL {
        let n = stats.dropped(reason);
        if n > 0 {
            tracing::info!(reason = reason.name(), packets = n, "dropped");
        }
    }
    tracing::info!(rx = stats.rx_frames, tx = stats.tx_frames, "bye");
    served
}
