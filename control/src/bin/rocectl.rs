//! `rocectl`: command-line client of the roceswitch control plane.
//!
//! `rocectl [--addr unix:/path|HOST:PORT] fabric get|set FILE|validate FILE|counters|events`
//! and `rocectl p4rt capabilities|pipeline`. Fabric configurations are the
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
    /// Server address: `unix:/path` or `HOST:PORT`.
    #[arg(long, default_value = "unix:/run/roceswitch/ctl.sock")]
    addr: String,
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
        Failure::Server(format!("{:?}: {}", s.code(), s.message()))
    }
}

impl From<tonic::transport::Error> for Failure {
    fn from(e: tonic::transport::Error) -> Self {
        Failure::Server(format!("connect: {e}"))
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
    let channel = control::client::connect(&cli.addr).await?;
    match cli.cmd {
        Cmd::Fabric { cmd } => {
            let mut c = FabricQosClient::new(channel);
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
                FabricCmd::Events { count } => {
                    let mut stream = c
                        .watch_events(pb::WatchEventsRequest {})
                        .await?
                        .into_inner();
                    let mut seen = 0;
                    while count.is_none_or(|n| seen < n) {
                        let Some(ev) = stream.message().await? else {
                            break;
                        };
                        println!("{} {:?}", ev.timestamp_ns, ev.kind);
                        seen += 1;
                    }
                }
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
    }
    Ok(())
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
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
