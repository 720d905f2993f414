//! A port whose interface disappears and comes back (issue #18), on the
//! real daemon. Needs root (creates network namespaces `rl-pl…`); skipped
//! with a message otherwise. Run under `flock /tmp/roceswitch-netns.lock`.
//!
//! ```text
//!        ns rl-pl…-sw: roceswitch              ns rl-pl…-h: the test's AF_PACKET sockets
//!   p0 ===================================== h0   (sends)
//!   p1 ===================================== h1   (deleted, then re-created)
//!   p2 ===================================== h2   (keeps capturing)
//! ```
//!
//! `l2_fwd` sends frames for h1's and h2's MACs out of ports 1 and 2
//! (`rocectl table add`). The test sends through both, deletes the p1/h1
//! veth, and checks the daemon is alive, still forwards to h2, emitted
//! "port 1 (p1) down: interface gone" on the event stream
//! (`rocectl watch`) and reports `roceswitch_port_oper_up{port="1"} 0`.
//! Then it re-creates the veth under the same names (a new ifindex) and
//! checks the up event, the metric, and that frames reach h1 again. Then
//! p2 is set down and up, and its peer h2 too (lost carrier, which gives
//! no socket error), each seen as a down and an up event. A
//! guard kills the daemon and the watcher and deletes the namespaces on
//! every path.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

mod netlab;

use dataplane::port::{AfPacketPort, FrameBuf, Port};
use netlab::{NetLab, ip, mac_text, root_or_skip};

const HOST_MACS: [[u8; 6]; 3] = [
    [0x02, 0, 0, 0, 0x0f, 0x00],
    [0x02, 0, 0, 0, 0x0f, 0x01],
    [0x02, 0, 0, 0, 0x0f, 0x02],
];
/// Long enough for a loaded CI machine; a patience bound, not a timing check.
const PATIENCE: Duration = Duration::from_secs(20);

struct Lab {
    net: NetLab,
    dir: tempfile::TempDir,
    children: Vec<Child>,
}

impl std::ops::Deref for Lab {
    type Target = NetLab;
    fn deref(&self) -> &NetLab {
        &self.net
    }
}

impl Drop for Lab {
    /// The daemon and the watcher go first; the namespaces follow with `net`.
    fn drop(&mut self) {
        for c in &mut self.children {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Lab {
    fn create() -> Lab {
        let net = NetLab::create("pl");
        for (i, mac) in HOST_MACS.iter().enumerate() {
            net.add_link(i, *mac);
        }
        Lab {
            net,
            dir: tempfile::tempdir().unwrap(),
            children: Vec::new(),
        }
    }

    fn socket(&self) -> PathBuf {
        self.dir.path().join("ctl.sock")
    }

    fn addr(&self) -> String {
        format!("unix:{}", self.socket().display())
    }

    fn log(&self) -> PathBuf {
        self.dir.path().join("roceswitch.log")
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(self.log()).unwrap_or_default()
    }

    fn start_daemon(&mut self) {
        let log = std::fs::File::create(self.log()).unwrap();
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", &self.sw, env!("CARGO_BIN_EXE_roceswitch")]);
        for i in 0..HOST_MACS.len() {
            cmd.args(["--port", &format!("{i}=p{i}")]);
        }
        cmd.args(["--grpc", &self.addr()])
            .args(["--metrics", "127.0.0.1:9464"])
            .args(["--log-level", "info"])
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log);
        self.children
            .push(cmd.spawn().expect("starting roceswitch"));
        let deadline = Instant::now() + PATIENCE;
        while !self.socket().exists() || self.rocectl(&["fabric", "get"]).is_err() {
            self.assert_daemon_alive();
            assert!(Instant::now() < deadline, "no answer:\n{}", self.log_text());
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn assert_daemon_alive(&mut self) {
        if let Some(status) = self.children[0].try_wait().unwrap() {
            panic!("roceswitch exited ({status}):\n{}", self.log_text());
        }
    }

    fn rocectl(&self, args: &[&str]) -> Result<String, String> {
        let out = Command::new(env!("CARGO_BIN_EXE_rocectl"))
            .args(["--addr", &self.addr()])
            .args(args)
            .output()
            .unwrap();
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        } else {
            Err(String::from_utf8_lossy(&out.stderr).into_owned())
        }
    }

    /// `rocectl watch`, its lines on a channel.
    fn watch(&mut self) -> Receiver<String> {
        let mut child = Command::new(env!("CARGO_BIN_EXE_rocectl"))
            .args(["--addr", &self.addr(), "watch"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let out = child.stdout.take().unwrap();
        self.children.push(child);
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        // Events before the watch has subscribed are not sent to it: change
        // an unused DSCP's priority back and forth until the watch reports
        // an applied configuration.
        let mut config: control::fabric::config::FabricConfig =
            serde_json::from_str(&self.rocectl(&["fabric", "get"]).unwrap()).unwrap();
        let file = self.dir.path().join("fabric.json");
        let deadline = Instant::now() + PATIENCE;
        'subscribed: loop {
            config.qos_maps.dscp_to_priority[1] ^= 1;
            std::fs::write(&file, serde_json::to_vec(&config).unwrap()).unwrap();
            self.rocectl(&["fabric", "set", file.to_str().unwrap()])
                .unwrap();
            let round = Instant::now() + Duration::from_secs(1);
            while let Ok(line) = rx.recv_timeout(round.saturating_duration_since(Instant::now())) {
                if line.contains("config applied") {
                    break 'subscribed;
                }
            }
            assert!(
                Instant::now() < deadline,
                "rocectl watch never reported an applied config"
            );
        }
        while rx.try_recv().is_ok() {}
        rx
    }

    /// `GET /metrics` from inside the switch namespace.
    fn metrics(&self) -> String {
        dataplane::port::netns::run_in(&self.sw, || {
            let mut s = std::net::TcpStream::connect("127.0.0.1:9464").ok()?;
            s.write_all(b"GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n")
                .ok()?;
            let mut body = String::new();
            s.read_to_string(&mut body).ok()?;
            Some(body)
        })
        .unwrap()
        .unwrap_or_default()
    }

    fn wait_metric(&self, line: &str) {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let m = self.metrics();
            if m.lines().any(|l| l == line) {
                return;
            }
            assert!(Instant::now() < deadline, "no `{line}` in:\n{m}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

fn frame(to: usize, seq: u32) -> FrameBuf {
    let mut f = HOST_MACS[to].to_vec();
    f.extend_from_slice(&HOST_MACS[0]);
    f.extend_from_slice(&[0x88, 0xb5]);
    f.extend_from_slice(&seq.to_be_bytes());
    f.resize(64, 0);
    let mut b = FrameBuf::default();
    b.set_frame(&f);
    b
}

/// Sends frame `seq` to host `to` every 20 ms until one with a sequence
/// number of at least `seq` arrives on `rx`; the time of that arrival.
fn until_forwarded(tx: &mut AfPacketPort, rx: &mut AfPacketPort, to: usize, seq: u32) -> Instant {
    let deadline = Instant::now() + PATIENCE;
    let mut bufs = FrameBuf::batch(16);
    loop {
        assert_eq!(tx.send_batch(&[frame(to, seq)]).unwrap(), 1);
        rx.wait_readable(Some(Duration::from_millis(20))).unwrap();
        // Our own socket saw its interface go down once (ENETDOWN): not a failure.
        let n = match rx.recv_batch(&mut bufs) {
            Ok(n) => n,
            Err(e) if e.link_down().is_some() => 0,
            Err(e) => panic!("{e}"),
        };
        let got = bufs[..n].iter().any(|b| {
            let f = b.frame();
            f.len() >= 18
                && f[..6] == HOST_MACS[to]
                && u32::from_be_bytes([f[14], f[15], f[16], f[17]]) >= seq
        });
        if got {
            return Instant::now();
        }
        assert!(Instant::now() < deadline, "nothing reached h{to}");
    }
}

fn wait_line(events: &Receiver<String>, want: &str) {
    let deadline = Instant::now() + PATIENCE;
    let mut seen = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = events
            .recv_timeout(left)
            .unwrap_or_else(|_| panic!("no event ending in `{want}`; saw {seen:#?}"));
        if line.ends_with(want) {
            return;
        }
        seen.push(line);
    }
}

#[test]
fn a_deleted_and_recreated_port_goes_down_and_comes_back() {
    if !root_or_skip("port_link") {
        return;
    }
    let mut lab = Lab::create();
    lab.start_daemon();
    for (i, mac) in HOST_MACS.iter().enumerate().skip(1) {
        let mac = mac_text(*mac);
        let port = i.to_string();
        lab.rocectl(&["table", "add", "l2_fwd", "0", &mac, "l2_forward", &port])
            .unwrap();
    }
    let events = lab.watch();
    let mut h0 = AfPacketPort::open_in_netns(&lab.host, "h0").unwrap();
    let mut h1 = AfPacketPort::open_in_netns(&lab.host, "h1").unwrap();
    let mut h2 = AfPacketPort::open_in_netns(&lab.host, "h2").unwrap();
    until_forwarded(&mut h0, &mut h1, 1, 1);
    until_forwarded(&mut h0, &mut h2, 2, 1);
    lab.wait_metric("roceswitch_port_oper_up{port=\"1\"} 1");

    // The interface goes away (with its peer).
    drop(h1);
    ip(&["-n", &lab.sw, "link", "del", "p1"]);
    wait_line(&events, "port 1 (p1) down: interface gone");
    lab.wait_metric("roceswitch_port_oper_up{port=\"1\"} 0");
    lab.wait_metric("roceswitch_port_oper_changes_total{direction=\"down\",port=\"1\"} 1");
    lab.assert_daemon_alive();
    until_forwarded(&mut h0, &mut h2, 2, 2);
    // Frames for the missing port are dropped under their own reason.
    for seq in 0..5 {
        h0.send_batch(&[frame(1, 100 + seq)]).unwrap();
    }
    let deadline = Instant::now() + PATIENCE;
    while !lab.metrics().lines().any(|l| {
        l.starts_with("roceswitch_ledger_dropped_total{port=\"0\",reason=\"port_down\"}")
            && !l.ends_with(" 0")
    }) {
        assert!(Instant::now() < deadline, "no port_down drops");
        std::thread::sleep(Duration::from_millis(50));
    }

    // Same names, new ifindex.
    lab.add_link(1, HOST_MACS[1]);
    let recreated = Instant::now();
    let mut h1 = AfPacketPort::open_in_netns(&lab.host, "h1").unwrap();
    let forwarded = until_forwarded(&mut h0, &mut h1, 1, 1000);
    eprintln!(
        "port_link: re-created veth to first forwarded frame: {:?}",
        forwarded - recreated
    );
    wait_line(&events, "port 1 (p1) up");
    lab.wait_metric("roceswitch_port_oper_up{port=\"1\"} 1");
    lab.wait_metric("roceswitch_port_oper_changes_total{direction=\"up\",port=\"1\"} 1");
    until_forwarded(&mut h0, &mut h2, 2, 3);

    // Set down without removal, then the peer down (carrier lost: no
    // socket error at all, only the interface flags tell).
    ip(&["-n", &lab.sw, "link", "set", "p2", "down"]);
    wait_line(&events, "port 2 (p2) down: administratively down");
    ip(&["-n", &lab.sw, "link", "set", "p2", "up"]);
    wait_line(&events, "port 2 (p2) up");
    ip(&["-n", &lab.host, "link", "set", "h2", "down"]);
    wait_line(&events, "port 2 (p2) down: no carrier");
    ip(&["-n", &lab.host, "link", "set", "h2", "up"]);
    wait_line(&events, "port 2 (p2) up");
    until_forwarded(&mut h0, &mut h2, 2, 4);
    lab.assert_daemon_alive();
    for line in lab.log_text().lines() {
        if line.contains("port down") || line.contains("port up") {
            eprintln!("port_link: daemon: {line}");
        }
    }
}
