//! The switch daemon's body, generic over the compiled program: ports
//! from the command line or a TOML file, the switch core on a dataplane
//! thread under the real-time driver, and P4Runtime plus the fabric QoS
//! service on a tokio runtime. `roceswitch` runs it for `roce_switch.p4`;
//! `p4-to-rust switch` generates a crate that runs it for any v1model
//! program.
//!
//! The two halves meet only through the driver's command channel (see
//! [`crate::switchdev`]). SIGINT/SIGTERM stop both; what the switch dropped
//! is logged by reason on the way out.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{Context, Result, bail};
use dataplane::dcbx::DcbxEvent;
use dataplane::driver::cpu::{allowed_cpus, cpu_list, online_cpus, pin_current_thread};
use dataplane::driver::{Driver, DriverIo, PollMode, command_channel};
use dataplane::port::{AfPacketPort, Port};
use dataplane::switch::SwitchEvent;
use dataplane::switch::{DEFAULT_CPU_PORT, Switch, SwitchConfig, SwitchDrop};
use dataplane::time::Instant;
use dataplane::tm::TmEvent;
use dataplane::wire::ethernet::EthernetAddress;
use p4_target::dynamic::Switchable;
use p4_target::pipeline::Pipeline;
use proto::roceswitch::fabric::v1 as fabric_pb;
use serde::Deserialize;

use crate::daemon::{Daemon, DaemonOptions};
use crate::fabric::FabricBackend;
use crate::fabric::SwitchBackend;
use crate::serve::Listen;
use crate::switchdev::SwitchDevice;

/// Command-line settings of a switch daemon.
#[derive(clap::Args, Debug, Clone)]
pub struct SwitchArgs {
    /// TOML configuration (ports, gRPC address, ...); flags override it.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// A port: `NUMBER=INTERFACE` (numbers 0..N-1, each once).
    #[arg(long = "port", value_name = "N=IFACE")]
    pub ports: Vec<String>,
    /// Default port speed (shaper and pause timing): 10G, 25G, 100G, 400M ...
    #[arg(long)]
    pub speed: Option<String>,
    /// gRPC listen address: HOST:PORT or unix:/path (a missing directory
    /// is created with mode 0750) [default: 127.0.0.1:9559, the address
    /// rocectl dials].
    #[arg(long, env = crate::serve::ADDR_ENV)]
    pub grpc: Option<String>,
    /// Group (name or gid) given the Unix socket and its directory, so its
    /// members can reach the daemon without root.
    #[arg(long, value_name = "GROUP")]
    pub grpc_group: Option<String>,
    /// P4Runtime device id [default: 1 for roceswitch; 0, as the reference
    /// switch answers, for switches built by `p4-to-rust switch`].
    #[arg(long)]
    pub device_id: Option<u64>,
    /// Whether P4Runtime's default role may write the tables the fabric
    /// service owns (role `roceswitch.fabric`): `shared` (spec §5.1: the
    /// default role has full pipeline access; the fabric service rewrites
    /// them when it next applies) or `owner-only` (PERMISSION_DENIED)
    /// [default: shared].
    #[arg(long, value_name = "POLICY")]
    pub owned_table_access: Option<crate::p4rt::roles::OwnedTableAccess>,
    /// CPU port number (PacketIn/PacketOut) [default: 510].
    #[arg(long)]
    pub cpu_port: Option<u16>,
    /// State file: restored at start, saved on every change before the
    /// change is acknowledged (survives kill -9). Holds the fabric QoS
    /// configuration; P4Runtime state (table entries, default actions,
    /// action profile members/groups, meter configs, register cells,
    /// pipeline cookie) goes to FILE.p4rt next to it. Counter values are
    /// not kept: they restart at zero.
    #[arg(long, value_name = "FILE")]
    pub state_file: Option<PathBuf>,
    /// Log filter (tracing-subscriber env-filter syntax).
    #[arg(long, default_value = "info")]
    pub log_level: String,
    /// Prometheus metrics: serve `GET /metrics` on this HOST:PORT (default: off).
    #[arg(long, value_name = "ADDR")]
    pub metrics: Option<String>,
    /// gRPC over TLS: the server certificate chain (PEM); needs --tls-key.
    #[arg(long, value_name = "FILE")]
    pub tls_cert: Option<PathBuf>,
    /// The private key (PEM) of --tls-cert.
    #[arg(long, value_name = "FILE")]
    pub tls_key: Option<PathBuf>,
    /// Mutual TLS: accept only clients with a certificate signed by this CA (PEM).
    #[arg(long, value_name = "FILE")]
    pub tls_client_ca: Option<PathBuf>,
    /// What the dataplane thread does when no frame is waiting: `sleep`
    /// (in ppoll until a frame or command comes; no CPU when idle),
    /// `busy` (never sleeps: lowest latency, costs a whole core, give it
    /// one with --dataplane-cpu) or `adaptive` (spins 100 µs after the
    /// last frame, then sleeps) [default: sleep].
    #[arg(long, value_name = "MODE")]
    pub dataplane_poll: Option<dataplane::driver::PollMode>,
    /// Pin the dataplane thread to this CPU, and the control plane's
    /// threads to the other CPUs the daemon may use.
    #[arg(long, value_name = "CPU")]
    pub dataplane_cpu: Option<usize>,
}

/// The TOML configuration file.
#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
struct FileConfig {
    grpc: Option<String>,
    grpc_group: Option<String>,
    device_id: Option<u64>,
    owned_table_access: Option<String>,
    cpu_port: Option<u16>,
    state_file: Option<PathBuf>,
    speed: Option<String>,
    tls_cert: Option<PathBuf>,
    tls_key: Option<PathBuf>,
    tls_client_ca: Option<PathBuf>,
    dataplane_poll: Option<String>,
    dataplane_cpu: Option<usize>,
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

/// Niceness of control-plane threads relative to the dataplane thread.
const CONTROL_PLANE_NICE: libc::c_int = 5;

/// Finished packet traces waiting for `rocectl trace`; more are dropped
/// (and counted in each reply) rather than slowing the dataplane.
const TRACE_QUEUE: usize = 4096;

/// Lowers the calling thread's scheduling priority (Linux nice values are
/// per thread) to [`CONTROL_PLANE_NICE`]; failure only costs fairness.
fn yield_to_dataplane() {
    // SAFETY: setpriority with PRIO_PROCESS and who = 0 affects the calling
    // thread only and takes plain integers.
    let r = unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, CONTROL_PLANE_NICE) };
    if r != 0 {
        tracing::debug!(error = %std::io::Error::last_os_error(), "could not lower control-plane priority");
    }
}

/// The ports from the file and the command line (a `--port` replaces the
/// file's port of the same number), refused with one line per problem a
/// user can fix: a number given twice, numbers with gaps, an interface
/// given to two ports (a missing interface: [`check_interfaces`]).
fn port_table(file: Vec<FilePort>, flags: &[String]) -> Result<BTreeMap<u16, FilePort>> {
    let mut ports: BTreeMap<u16, FilePort> = BTreeMap::new();
    for p in file {
        let n = p.number;
        if ports.insert(n, p).is_some() {
            bail!("port {n} appears twice in the config file");
        }
    }
    let mut from_flags = BTreeMap::new();
    for spec in flags {
        let (n, iface) = spec
            .split_once('=')
            .with_context(|| format!("--port {spec:?}: expected NUMBER=INTERFACE"))?;
        let number: u16 = n
            .parse()
            .with_context(|| format!("--port {spec:?}: bad port number"))?;
        if let Some(earlier) = from_flags.insert(number, spec) {
            bail!("port {number} is given twice (--port {earlier} and --port {spec})");
        }
        let port = FilePort {
            number,
            iface: iface.to_string(),
            speed: None,
            mtu: None,
            cable_m: None,
            lossless: None,
        };
        ports.insert(number, port);
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
    let mut owner: BTreeMap<&str, u16> = BTreeMap::new();
    for (n, p) in &ports {
        if let Some(first) = owner.insert(&p.iface, *n) {
            bail!(
                "interface {} is given to ports {first} and {n}; each port needs its own interface",
                p.iface
            );
        }
    }
    Ok(ports)
}

/// Refuses, with one line, a port whose interface this namespace lacks
/// (checked after the TLS files, just before the ports open).
fn check_interfaces(ports: &BTreeMap<u16, FilePort>) -> Result<()> {
    for (n, p) in ports {
        if !interface_exists(&p.iface) {
            bail!(
                "port {n}: no network interface named {:?} in this namespace (`ip link` lists them)",
                p.iface
            );
        }
    }
    Ok(())
}

/// Whether this network namespace has an interface called `name`.
fn interface_exists(name: &str) -> bool {
    let Ok(c) = std::ffi::CString::new(name) else {
        return false;
    };
    // SAFETY: `c` is a valid NUL-terminated string; if_nametoindex reads it only.
    unsafe { libc::if_nametoindex(c.as_ptr()) != 0 }
}

/// Where the threads run when a CPU is given to the dataplane.
#[derive(Clone, Debug)]
struct DataplaneCpus {
    /// The dataplane thread's CPU.
    dataplane: usize,
    /// The other CPUs the daemon may use, for the control plane (empty on
    /// a one-CPU mask: the control plane then shares the dataplane's).
    control: Vec<usize>,
}

/// Checks `--dataplane-cpu` against the online CPUs (before any thread
/// starts, so a typo fails at once with the list) and gives the control
/// plane the rest of the CPUs the daemon was started on (`taskset -c 0
/// roceswitch --dataplane-cpu 1`: dataplane on 1, control plane on 0).
fn dataplane_cpus(cpu: Option<usize>) -> Result<Option<DataplaneCpus>> {
    let Some(cpu) = cpu else { return Ok(None) };
    let online = online_cpus().context("--dataplane-cpu")?;
    if !online.contains(&cpu) {
        bail!(
            "--dataplane-cpu {cpu}: not an online CPU (online: {})",
            cpu_list(&online)
        );
    }
    let allowed = allowed_cpus().context("--dataplane-cpu")?;
    let control: Vec<usize> = allowed.into_iter().filter(|&c| c != cpu).collect();
    if control.is_empty() {
        tracing::warn!(
            cpu,
            "--dataplane-cpu: no other CPU is allowed; the control plane shares the dataplane's"
        );
    }
    Ok(Some(DataplaneCpus {
        dataplane: cpu,
        control,
    }))
}

/// Line time a port's receive ring holds ([`rx_ring_bytes`]).
pub const RX_RING_TIME_MS: u64 = 25;

/// Most memory one port's receive ring takes, bytes.
pub const RX_RING_MAX_BYTES: usize = 64 << 20;

/// Receive ring memory of a port of `speed_bps`: [`RX_RING_TIME_MS`] of
/// line rate, at least the port default (8 MiB) and at most
/// [`RX_RING_MAX_BYTES`]. The ring is where frames wait while the
/// dataplane thread is busy elsewhere, and the switch can only pause a
/// sender for what it has read: at 10 Gb/s with a 9000-byte MTU the
/// default ring is 896 slots, 3 ms of 4 KiB RoCE frames, and `rocelab run
/// --speed 10G` lost 35–220 k frames in it per 4 s incast (README, #17
/// lab24). Slots are sized for the MTU whatever the frame, so 25 ms of
/// line rate (30 MiB, ~3,300 slots at 10 Gb/s) holds 11 ms of 4 KiB frames.
/// Up to 2.5 Gb/s the default is kept.
pub fn rx_ring_bytes(speed_bps: u64) -> usize {
    use dataplane::port::AfPacketConfig;
    AfPacketConfig::rx_ring_bytes_for_line(
        speed_bps,
        RX_RING_TIME_MS,
        AfPacketConfig::default().rx_ring_bytes,
        RX_RING_MAX_BYTES,
    )
}

/// `10G`, `25g`, `400M`, `1000000000` → bits per second, with the one
/// parser every binary uses ([`dataplane::units::parse_rate_bps`]).
pub fn parse_speed(s: &str) -> Result<u64> {
    dataplane::units::parse_rate_bps(s).with_context(|| "bad speed (try 10G, 25G, 100G)")
}

/// What a switch binary assumes when neither flag nor file says.
#[derive(Clone, Copy, Debug)]
pub struct Defaults {
    /// P4Runtime device id.
    pub device_id: u64,
}

impl Defaults {
    /// `roceswitch`: device 1.
    pub const ROCESWITCH: Defaults = Defaults { device_id: 1 };
    /// A switch built by `p4-to-rust switch`: device 0, as the reference
    /// switch (bmv2) answers, so tutorial controllers connect unchanged.
    pub const P4_REFERENCE: Defaults = Defaults { device_id: 0 };
}

/// Sets up logging from `args` and runs the daemon for `program` until
/// SIGINT/SIGTERM, with roceswitch's defaults.
pub fn main<P: Pipeline>(args: SwitchArgs, program: P) -> Result<()> {
    main_with(args, program, Defaults::ROCESWITCH)
}

/// [`main`] with the given defaults.
pub fn main_with<P: Pipeline>(args: SwitchArgs, program: P, defaults: Defaults) -> Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_new(&args.log_level).context("--log-level")?,
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    run(args, program, defaults)
}

/// Runs the daemon for `program` until SIGINT/SIGTERM (logging set up by the caller).
pub fn run<P: Pipeline>(args: SwitchArgs, program: P, defaults: Defaults) -> Result<()> {
    let file: FileConfig = match &args.config {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading {}", path.display()))?;
            toml::from_str(&text).with_context(|| format!("parsing {}", path.display()))?
        }
        None => FileConfig::default(),
    };
    let default_speed = parse_speed(
        args.speed
            .as_deref()
            .or(file.speed.as_deref())
            .unwrap_or("10G"),
    )
    .context("--speed")?;
    let ports = port_table(file.ports, &args.ports)?;
    let cpu_port = args.cpu_port.or(file.cpu_port).unwrap_or(DEFAULT_CPU_PORT);
    let listen: Listen = args
        .grpc
        .as_deref()
        .or(file.grpc.as_deref())
        .unwrap_or(crate::serve::DEFAULT_ADDR)
        .parse()
        .context("--grpc: expected HOST:PORT or unix:/path")?;
    let grpc_group = args.grpc_group.or(file.grpc_group);
    let device_id = args
        .device_id
        .or(file.device_id)
        .unwrap_or(defaults.device_id);
    let owned_table_access = match (args.owned_table_access, &file.owned_table_access) {
        (Some(a), _) => a,
        (None, Some(s)) => s
            .parse()
            .map_err(|e: String| anyhow::anyhow!("owned_table_access: {e}"))?,
        (None, None) => Default::default(),
    };
    let state_file = args.state_file.or(file.state_file);
    let poll_mode = match (args.dataplane_poll, &file.dataplane_poll) {
        (Some(m), _) => m,
        (None, Some(s)) => s.parse().context("dataplane_poll")?,
        (None, None) => Default::default(),
    };
    let cpus = dataplane_cpus(args.dataplane_cpu.or(file.dataplane_cpu))?;
    if poll_mode == PollMode::Busy && cpus.is_none() {
        tracing::warn!(
            "--dataplane-poll busy without --dataplane-cpu: the spinning thread takes whichever core the scheduler gives it, and delays what else runs there"
        );
    }
    let (tls, tls_mode) = server_tls(
        args.tls_cert.or(file.tls_cert),
        args.tls_key.or(file.tls_key),
        args.tls_client_ca.or(file.tls_client_ca),
    )?;

    // Ports and traffic manager.
    let mut config = SwitchConfig::with_ports(ports.len());
    config.cpu_port = Some(cpu_port);
    check_interfaces(&ports)?;
    let mut opened: Vec<Box<dyn Port + Send>> = Vec::new();
    for (n, p) in &ports {
        let speed_bps = match &p.speed {
            Some(s) => parse_speed(s).with_context(|| format!("port {n} speed"))?,
            None => default_speed,
        };
        let ring = dataplane::port::AfPacketConfig {
            rx_ring_bytes: rx_ring_bytes(speed_bps),
            ..Default::default()
        };
        let port = AfPacketPort::open_with(&p.iface, ring)
            .with_context(|| format!("opening port {n} ({})", p.iface))?;
        let tm_port = &mut config.tm.ports[usize::from(*n)];
        tm_port.speed_bps = speed_bps;
        tm_port.shaper_burst_ns =
            dataplane::driver::train_ns(dataplane::driver::TURN_SLACK_NS, speed_bps);
        tm_port.shaper_train_ns =
            dataplane::driver::train_ns(dataplane::driver::SHAPER_TRAIN_NS, speed_bps);
        tm_port.shaper_catch_up_ns = dataplane::driver::CATCH_UP_NS;
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
        tracing::info!(port = n, iface = %p.iface, speed_bps = tm_port.speed_bps, "port opened");
        opened.push(Box::new(port));
    }
    let base_tm = config.tm.clone();
    let fabric_defaults = dataplane::fabric::FabricConfig {
        ports: dataplane::fabric::ports_of(&base_tm),
        ..Default::default()
    };
    let info = program.info();
    // P4Runtime may load another program (SetForwardingPipelineConfig with
    // a bundle): the switch runs the compiled-in one through `Switchable`.
    let program = Switchable::new(program);
    let switch =
        Switch::new(program, config, Instant::ZERO).context("traffic manager configuration")?;

    // The dataplane thread.
    let (cmd_tx, cmd_rx) =
        command_channel::<Switchable<P>>().context("dataplane command channel")?;
    let (pin_tx, _) = tokio::sync::broadcast::channel::<Vec<u8>>(1024);
    let pin = pin_tx.clone();
    let (event_tx, mut event_rx) = tokio::sync::mpsc::unbounded_channel::<SwitchEvent>();
    let (digest_tx, _) = tokio::sync::broadcast::channel::<crate::device::Digest>(4096);
    let digests = digest_tx.clone();
    let io = DriverIo {
        commands: cmd_rx,
        packet_in: Some(Box::new(move |frame| {
            let _ = pin.send(frame);
        })),
        events: Some(Box::new(move |event| {
            tracing::info!(?event, "switch event");
            let _ = event_tx.send(event);
        })),
        digests: Some(Box::new(move |digest| {
            let _ = digests.send(digest);
        })),
    };
    // Finished packet traces leave the dataplane thread through a bounded
    // queue (dropped and counted when full) towards the fabric service.
    let (trace_tap, trace_sink) = crate::fabric::TraceTap::new(TRACE_QUEUE);
    let stop = Arc::new(AtomicBool::new(false));
    let dataplane = {
        let stop = stop.clone();
        let dataplane_cpu = cpus.as_ref().map(|c| c.dataplane);
        std::thread::Builder::new().name("dataplane".into()).spawn(
            move || -> Result<Switch<Switchable<P>>> {
                if let Some(cpu) = dataplane_cpu {
                    pin_current_thread(&[cpu]).context("--dataplane-cpu")?;
                }
                tracing::info!(poll = %poll_mode, cpu = ?dataplane_cpu, "dataplane thread");
                let mut driver = Driver::new(switch, opened, io)
                    .with_trace_sink(trace_sink)
                    .with_poll_mode(poll_mode);
                driver.run(&stop).context("dataplane")?;
                tracing::info!(stats = ?driver.stats(), "dataplane stopped");
                Ok(driver.into_switch())
            },
        )?
    };

    // The control plane, a little behind the dataplane thread when they
    // compete for a CPU: a burst of writes should slow the writes, not the
    // forwarding. With a CPU given to the dataplane, the control plane's
    // threads (this one and those it starts) keep off it.
    yield_to_dataplane();
    if let Some(cpus) = &cpus
        && !cpus.control.is_empty()
    {
        pin_current_thread(&cpus.control).context("pinning the control plane")?;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .on_thread_start(yield_to_dataplane)
        .enable_all()
        .build()
        .context("tokio runtime")?;
    let port_names: Vec<(u16, String)> = ports.iter().map(|(n, p)| (*n, p.iface.clone())).collect();
    let event_names = port_names.clone();
    let served = runtime.block_on(async {
        let device = Arc::new(
            SwitchDevice::new(cmd_tx.clone(), pin_tx)
                .with_digests(digest_tx)
                .with_pipeline_swaps(),
        );
        let submit = cmd_tx.clone();
        let tm: Arc<dyn FabricBackend> = Arc::new(
            SwitchBackend::new(Box::new(move |cmd| submit.send(cmd).is_ok()), info, base_tm)
                .with_trace_tap(trace_tap)
                .with_port_names(port_names),
        );
        let opts = DaemonOptions {
            listen: listen.clone(),
            device_id,
            owned_table_access,
            p4rt_state_file: state_file.as_deref().map(crate::daemon::p4rt_state_path),
            state_file,
            fabric_defaults,
        };
        // Prometheus endpoint (off unless --metrics): the traffic manager's counters.
        if let Some(addr) = &args.metrics {
            let listener = crate::metrics::bind(addr).await?;
            tracing::info!(%addr, "serving Prometheus metrics");
            tokio::spawn(crate::metrics::serve(
                listener,
                tm.clone(),
                std::future::pending(),
            ));
        }
        let daemon = Daemon::build(opts, info, device, Some(tm)).context("control plane")?;
        let (bound, p4rt, fabric) = daemon
            .bind()
            .await
            .with_context(|| format!("gRPC listen on {listen}"))?;
        if let (Listen::Unix(path), Some(group)) = (&listen, &grpc_group) {
            crate::serve::grant_group(path, group)
                .with_context(|| format!("--grpc-group {group} on {}", path.display()))?;
        }
        // Watchdog storms and restorations, pause changes (the PFC deadlock
        // view's inputs) and DCBX mismatches go out on the fabric event stream.
        let fabric_tx = fabric.events();
        tokio::spawn(async move {
            while let Some(event) = event_rx.recv().await {
                for e in fabric_events(&event, &event_names) {
                    let _ = fabric_tx.send(e);
                }
            }
        });
        tracing::info!(
            program = info.name,
            %listen,
            tls = tls_mode,
            device_id,
            cpu_port,
            "serving P4Runtime and fabric QoS"
        );
        let shutdown = async {
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(mut term) => {
                    tokio::select! {
                        _ = tokio::signal::ctrl_c() => {},
                        _ = term.recv() => {},
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %e, "no SIGTERM handler; stopping on SIGINT only");
                    let _ = tokio::signal::ctrl_c().await;
                }
            }
            tracing::info!("shutting down");
        };
        bound
            .serve_tls(tls, Some(p4rt), Some(fabric), shutdown)
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

/// The gRPC listener's TLS configuration and mode (off, on, mutual), the
/// files read and checked now so that a bad one stops the daemon before it
/// opens ports.
fn server_tls(
    cert: Option<PathBuf>,
    key: Option<PathBuf>,
    client_ca: Option<PathBuf>,
) -> Result<(Option<tonic::transport::ServerTlsConfig>, &'static str)> {
    let files = match (cert, key) {
        (None, None) if client_ca.is_some() => {
            bail!("--tls-client-ca needs --tls-cert and --tls-key")
        }
        (None, None) => return Ok((None, "off")),
        (Some(cert), Some(key)) => crate::tls::ServerTlsFiles {
            cert,
            key,
            client_ca,
        },
        _ => bail!("--tls-cert and --tls-key go together"),
    };
    let mode = if files.client_ca.is_some() {
        "mutual"
    } else {
        "on"
    };
    Ok((Some(files.load()?), mode))
}

/// The fabric service's events for a switch event (none for most);
/// `names` gives each port's interface.
fn fabric_events(event: &SwitchEvent, names: &[(u16, String)]) -> Vec<fabric_pb::Event> {
    let kind = match *event {
        SwitchEvent::PortOper { port, down } => {
            fabric_pb::event::Kind::PortOper(fabric_pb::PortOper {
                port: port.into(),
                name: names
                    .iter()
                    .find(|(n, _)| *n == port)
                    .map(|(_, name)| name.clone())
                    .unwrap_or_default(),
                up: down.is_none(),
                cause: down.map_or_else(String::new, |c| c.describe().to_string()),
            })
        }
        SwitchEvent::Tm(TmEvent::StormDetected { port, priority, .. }) => {
            fabric_pb::event::Kind::Storm(fabric_pb::WatchdogStorm {
                port: port.into(),
                priority: priority.into(),
            })
        }
        SwitchEvent::Tm(TmEvent::StormRestored { port, priority, .. }) => {
            fabric_pb::event::Kind::Restore(fabric_pb::WatchdogRestore {
                port: port.into(),
                priority: priority.into(),
            })
        }
        SwitchEvent::Tm(TmEvent::PauseRxStarted { port, priority })
        | SwitchEvent::Tm(TmEvent::PauseRxEnded { port, priority }) => {
            fabric_pb::event::Kind::PauseChange(fabric_pb::PauseChange {
                port: port.into(),
                priority: priority.into(),
                kind: fabric_pb::PauseKind::EgressPaused as i32,
                active: matches!(event, SwitchEvent::Tm(TmEvent::PauseRxStarted { .. })),
            })
        }
        SwitchEvent::Tm(TmEvent::XoffSent {
            port, priorities, ..
        })
        | SwitchEvent::Tm(TmEvent::XonSent {
            port, priorities, ..
        }) => {
            // One event per priority of the PG's PFC frame.
            let active = matches!(event, SwitchEvent::Tm(TmEvent::XoffSent { .. }));
            return (0..8u32)
                .filter(|p| priorities & (1 << p) != 0)
                .map(|priority| {
                    stamped(fabric_pb::event::Kind::PauseChange(
                        fabric_pb::PauseChange {
                            port: port.into(),
                            priority,
                            kind: fabric_pb::PauseKind::IngressXoff as i32,
                            active,
                        },
                    ))
                })
                .collect();
        }
        SwitchEvent::Dcbx {
            port,
            event: DcbxEvent::MismatchChanged { mismatch },
        } => fabric_pb::event::Kind::DcbxMismatch(fabric_pb::DcbxMismatch {
            port: port.into(),
            mismatch: mismatch.describe(),
        }),
        _ => return Vec::new(),
    };
    vec![stamped(kind)]
}

/// `kind` as an event stamped with the wall clock now.
fn stamped(kind: fabric_pb::event::Kind) -> fabric_pb::Event {
    let timestamp_ns = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    fabric_pb::Event {
        timestamp_ns,
        kind: Some(kind),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fabric_events_unnamed(event: &SwitchEvent) -> Vec<fabric_pb::Event> {
        fabric_events(event, &[])
    }

    #[test]
    fn a_port_oper_change_is_a_fabric_event_with_the_interface_name() {
        let names = [(2u16, "veth2".to_string())];
        let down = fabric_events(
            &SwitchEvent::PortOper {
                port: 2,
                down: Some(dataplane::port::LinkDown::Gone),
            },
            &names,
        );
        assert_eq!(
            down[0].kind,
            Some(fabric_pb::event::Kind::PortOper(fabric_pb::PortOper {
                port: 2,
                name: "veth2".into(),
                up: false,
                cause: "interface gone".into(),
            }))
        );
        let up = fabric_events(
            &SwitchEvent::PortOper {
                port: 2,
                down: None,
            },
            &names,
        );
        assert!(matches!(
            &up[0].kind,
            Some(fabric_pb::event::Kind::PortOper(o)) if o.up && o.cause.is_empty()
        ));
    }

    #[test]
    fn a_dcbx_mismatch_is_a_fabric_event_and_lldp_chatter_is_not() {
        use dataplane::dcbx::Mismatch;
        let e = fabric_events_unnamed(&SwitchEvent::Dcbx {
            port: 2,
            event: DcbxEvent::MismatchChanged {
                mismatch: Mismatch {
                    pfc: true,
                    ..Mismatch::default()
                },
            },
        })
        .pop()
        .unwrap();
        assert_eq!(
            e.kind,
            Some(fabric_pb::event::Kind::DcbxMismatch(
                fabric_pb::DcbxMismatch {
                    port: 2,
                    mismatch: "pfc".into(),
                }
            ))
        );
        let removed = SwitchEvent::Dcbx {
            port: 2,
            event: DcbxEvent::NeighborRemoved,
        };
        assert_eq!(fabric_events_unnamed(&removed), vec![]);
    }

    #[test]
    fn pauses_and_xoffs_are_fabric_events_one_per_priority() {
        let kind = |e: &fabric_pb::Event| match &e.kind {
            Some(fabric_pb::event::Kind::PauseChange(c)) => *c,
            other => panic!("{other:?}"),
        };
        let xoff = fabric_events_unnamed(&SwitchEvent::Tm(TmEvent::XoffSent {
            port: 2,
            pg: 3,
            priorities: 0b1_1000,
        }));
        let got: Vec<_> = xoff.iter().map(kind).collect();
        assert_eq!(
            got,
            [3, 4].map(|priority| fabric_pb::PauseChange {
                port: 2,
                priority,
                kind: fabric_pb::PauseKind::IngressXoff as i32,
                active: true,
            })
        );
        let ended = fabric_events_unnamed(&SwitchEvent::Tm(TmEvent::PauseRxEnded {
            port: 1,
            priority: 3,
        }));
        assert_eq!(
            kind(&ended[0]),
            fabric_pb::PauseChange {
                port: 1,
                priority: 3,
                kind: fabric_pb::PauseKind::EgressPaused as i32,
                active: false,
            }
        );
    }

    #[test]
    fn rx_rings_grow_with_speed_between_the_default_and_a_cap() {
        let default = dataplane::port::AfPacketConfig::default().rx_ring_bytes;
        assert_eq!(rx_ring_bytes(1_000_000_000), default);
        assert_eq!(rx_ring_bytes(2_500_000_000), default);
        assert_eq!(rx_ring_bytes(10_000_000_000), 31_250_000);
        assert_eq!(rx_ring_bytes(100_000_000_000), RX_RING_MAX_BYTES);
    }

    #[test]
    fn speeds_parse_with_units() {
        assert_eq!(parse_speed("10G").unwrap(), 10_000_000_000);
        assert_eq!(parse_speed("25g").unwrap(), 25_000_000_000);
        assert_eq!(parse_speed("400M").unwrap(), 400_000_000);
        assert_eq!(parse_speed("1.5G").unwrap(), 1_500_000_000);
        assert_eq!(parse_speed("1000").unwrap(), 1000);
        assert!(parse_speed("fast").is_err());
        assert!(parse_speed("-1G").is_err());
        assert!(parse_speed("0").is_err());
    }

    #[test]
    fn config_file_rejects_unknown_fields() {
        let ok: FileConfig = toml::from_str(
            "grpc = \"unix:/tmp/x\"\n[[port]]\nnumber = 0\niface = \"veth0\"\nlossless = [3, 4]\n",
        )
        .unwrap();
        assert_eq!(ok.ports.len(), 1);
        assert_eq!(ok.ports[0].lossless.as_deref(), Some(&[3u8, 4][..]));
        assert!(
            toml::from_str::<FileConfig>("[[port]]\nnumber = 0\niface = \"a\"\nsped = \"1G\"\n")
                .is_err()
        );
    }
    #[test]
    fn the_dataplane_poll_mode_and_cpu_come_from_the_file_or_flags() {
        let file: FileConfig =
            toml::from_str("dataplane_poll = \"busy\"\ndataplane_cpu = 0\n").unwrap();
        assert_eq!(file.dataplane_poll.as_deref(), Some("busy"));
        assert_eq!(file.dataplane_cpu, Some(0));
        assert_eq!("busy".parse::<PollMode>(), Ok(PollMode::Busy));
        let allowed = allowed_cpus().unwrap();
        let cpus = dataplane_cpus(Some(allowed[0])).unwrap().unwrap();
        assert_eq!(cpus.dataplane, allowed[0]);
        assert_eq!(cpus.control, allowed[1..]);
        let err = dataplane_cpus(Some(100_000)).unwrap_err().to_string();
        assert!(
            err.starts_with("--dataplane-cpu 100000: not an online CPU"),
            "{err}"
        );
        assert!(dataplane_cpus(None).unwrap().is_none());
    }
}
