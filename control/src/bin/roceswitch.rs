//! `roceswitch`: the switch daemon for `roce_switch.p4`.
//!
//! Runs the compiled-in program and the traffic manager on Linux interfaces
//! (veth in labs) and serves P4Runtime plus the fabric QoS service over
//! gRPC; see [`control::switchd`].
//!
//! ```text
//! roceswitch --port 0=veth0 --port 1=veth1 --speed 10G --grpc 127.0.0.1:9559
//! roceswitch --config switch.toml
//! ```

use clap::Parser;

#[derive(Parser, Debug)]
#[command(
    name = "roceswitch",
    version,
    about = "RoCEv2 lossless-Ethernet software switch: roce_switch.p4 + traffic manager + P4Runtime"
)]
struct Cli {
    #[command(flatten)]
    switch: control::switchd::SwitchArgs,
}

fn main() -> anyhow::Result<()> {
    cli_common::handle_doc_flags::<Cli>();
    let cli = Cli::parse();
    control::switchd::main(cli.switch, dataplane::roce::Program::new())
}
