//! Shared fixture for the fabric service and rocectl tests: a switch
//! running `roce_switch.p4` on its own thread behind a `SwitchBackend`, a
//! way to run code on that thread, the service on 127.0.0.1:0 with a
//! client, and the `rocectl` binary run against an address.

#![allow(dead_code, unreachable_pub)]

use std::sync::mpsc::{Sender, channel};

use control::fabric::{FabricService, SwitchBackend};
use dataplane::driver::Command;
use dataplane::roce::{PROGRAM_INFO, Program};
use dataplane::switch::{Switch, SwitchConfig};
use dataplane::time::Instant;
use proto::roceswitch::fabric::v1::fabric_qos_client::FabricQosClient;
use tonic::transport::Channel;

/// A 4-port switch on its own thread (each command 1 µs after the last),
/// and the backend in front of it.
pub fn switch() -> (SwitchBackend<Program>, Sender<Command<Program>>) {
    let config = SwitchConfig::with_ports(4);
    let base = config.tm.clone();
    let (tx, rx) = channel::<Command<Program>>();
    std::thread::spawn(move || {
        let mut sw = Switch::new(Program::new(), config, Instant::ZERO).unwrap();
        let mut t = 0;
        while let Ok(cmd) = rx.recv() {
            t += 1_000;
            cmd(&mut sw, Instant::from_nanos(t));
        }
    });
    let submit = tx.clone();
    let backend = SwitchBackend::new(
        Box::new(move |cmd| submit.send(cmd).is_ok()),
        &PROGRAM_INFO,
        base,
    );
    (backend, tx)
}

/// Runs `f` on the switch thread and returns its result.
pub fn on_switch<R: Send + 'static>(
    tx: &Sender<Command<Program>>,
    f: impl FnOnce(&mut Switch<Program>, Instant) -> R + Send + 'static,
) -> R {
    let (rtx, rrx) = channel();
    tx.send(Box::new(move |sw, now| {
        let _ = rtx.send(f(sw, now));
    }))
    .unwrap();
    rrx.recv().unwrap()
}

/// Serves `svc` on 127.0.0.1:0; a client of it.
pub async fn serve(svc: FabricService) -> FabricQosClient<Channel> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(svc.into_server())
            .serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(listener)),
    );
    FabricQosClient::connect(format!("http://{addr}"))
        .await
        .unwrap()
}

/// Runs `rocectl --addr ADDR ARGS...` off the async runtime.
pub async fn rocectl(addr: String, args: &[&str]) -> std::process::Output {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    tokio::task::spawn_blocking(move || {
        std::process::Command::new(env!("CARGO_BIN_EXE_rocectl"))
            .arg("--addr")
            .arg(addr)
            .args(args)
            .output()
            .unwrap()
    })
    .await
    .unwrap()
}
