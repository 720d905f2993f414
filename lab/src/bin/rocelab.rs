//! `rocelab`: network-namespace labs for roceswitch from a TOML topology.
//!
//! `rocelab up FILE` creates namespaces `rl-<lab>-<node>`, veth pairs, MACs,
//! turns IPv6 off and starts each node's command (switch daemon, roceperf);
//! `rocelab down [LAB]` removes everything the lab's state file records
//! (all labs without LAB), also after a crash; `rocelab status [LAB]`
//! shows what exists. Ctrl-C during `up` removes what was created. Needs
//! root (CAP_NET_ADMIN, CAP_SYS_ADMIN).

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};
use lab::labctl::{self, state::DEFAULT_STATE_DIR, state::StateStore};
use lab::topo::Topology;

#[derive(Parser)]
#[command(name = "rocelab", version, about = "Namespace labs for roceswitch")]
struct Cli {
    /// Directory of lab state files and process logs.
    #[arg(long, global = true, default_value = DEFAULT_STATE_DIR)]
    state_dir: PathBuf,
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Create a lab from a topology file.
    Up {
        /// Topology (TOML).
        file: PathBuf,
    },
    /// Remove a lab (every lab with a state file if none is named).
    Down {
        /// Lab name.
        lab: Option<String>,
    },
    /// Show what a lab (or every lab) consists of and whether it exists.
    Status {
        /// Lab name.
        lab: Option<String>,
    },
}

fn main() -> Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    let store = StateStore::new(&cli.state_dir);
    match cli.cmd {
        Cmd::Up { file } => {
            let text = std::fs::read_to_string(&file)
                .with_context(|| format!("reading {}", file.display()))?;
            let topo =
                Topology::from_toml(&text).with_context(|| format!("in {}", file.display()))?;
            let stop = lab::signal::stop_flag();
            let st = labctl::up(&topo, Some(&file), &store, stop)?;
            println!(
                "lab {} up: {} namespaces, {} links, {} processes (state {})",
                st.lab,
                st.netns.len(),
                st.links.len(),
                st.processes.len(),
                store.path(&st.lab).display()
            );
            for n in &st.notes {
                println!("note: {n}");
            }
        }
        Cmd::Down { lab } => {
            let labs = match lab {
                Some(l) => vec![l],
                None => store.labs()?,
            };
            let mut failed = Vec::new();
            for l in &labs {
                match labctl::down(l, &store) {
                    Ok(()) => println!("lab {l} down"),
                    Err(e) => {
                        eprintln!("error: {e:#}");
                        failed.push(l.clone());
                    }
                }
            }
            if !failed.is_empty() {
                bail!("could not remove lab(s) {}", failed.join(", "));
            }
        }
        Cmd::Status { lab } => {
            let labs = match lab {
                Some(l) => vec![l],
                None => store.labs()?,
            };
            if labs.is_empty() {
                println!("no labs in {}", store.dir().display());
            }
            for l in &labs {
                print!("{}", labctl::status(l, &store)?);
            }
        }
    }
    Ok(())
}
