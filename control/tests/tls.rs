//! TLS and mutual TLS on the gRPC listener, with certificates made at test
//! time by `rcgen` (a CA, a server certificate for `localhost`/127.0.0.1, a
//! client certificate, and a second "rogue" CA with its own client
//! certificate): plain clients and clients trusting another CA are refused,
//! TLS clients get Capabilities, mTLS refuses clients without a certificate
//! of the configured CA, over TCP loopback and a Unix socket; `rocectl`
//! with `--ca/--cert/--key`; bad files are clear startup errors of the
//! library and of the `roceswitch` daemon.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::*;
use control::device::LocalDevice;
use control::p4rt::{P4RuntimeConfig, P4RuntimeService};
use control::serve::{Bound, Listen};
use control::tls::{ClientTlsFiles, ServerTlsFiles, TlsError};
use p4_target::runtime::Runtime;
use proto::p4::v1 as pb;
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};

/// A CA: its PEM certificate and the issuer that signs with it.
struct Ca {
    pem: String,
    issuer: Issuer<'static, KeyPair>,
}

fn ca(name: &str) -> Ca {
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.distinguished_name.push(DnType::CommonName, name);
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let key = KeyPair::generate().unwrap();
    let cert = params.self_signed(&key).unwrap();
    Ca {
        pem: cert.pem(),
        issuer: Issuer::new(params, key),
    }
}

/// A leaf certificate signed by `ca`: `(certificate PEM, key PEM)`.
fn leaf(ca: &Ca, names: &[&str], usage: ExtendedKeyUsagePurpose) -> (String, String) {
    let mut params =
        CertificateParams::new(names.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap();
    params.distinguished_name.push(DnType::CommonName, names[0]);
    params.use_authority_key_identifier_extension = true;
    params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    params.extended_key_usages = vec![usage];
    let key = KeyPair::generate().unwrap();
    let cert = params.signed_by(&key, &ca.issuer).unwrap();
    (cert.pem(), key.serialize_pem())
}

/// Every PEM file of the tests, in one temporary directory.
struct Pki {
    _dir: tempfile::TempDir,
    ca: PathBuf,
    server_cert: PathBuf,
    server_key: PathBuf,
    client_cert: PathBuf,
    client_key: PathBuf,
    rogue_ca: PathBuf,
    rogue_cert: PathBuf,
    rogue_key: PathBuf,
}

fn pki() -> Pki {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| -> PathBuf {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let good = ca("roceswitch test CA");
    let rogue = ca("rogue CA");
    let (server_cert, server_key) = leaf(
        &good,
        &["localhost", "127.0.0.1"],
        ExtendedKeyUsagePurpose::ServerAuth,
    );
    let (client_cert, client_key) =
        leaf(&good, &["controller"], ExtendedKeyUsagePurpose::ClientAuth);
    let (rogue_cert, rogue_key) = leaf(&rogue, &["intruder"], ExtendedKeyUsagePurpose::ClientAuth);
    Pki {
        ca: write("ca.pem", &good.pem),
        server_cert: write("server.pem", &server_cert),
        server_key: write("server.key", &server_key),
        client_cert: write("client.pem", &client_cert),
        client_key: write("client.key", &client_key),
        rogue_ca: write("rogue-ca.pem", &rogue.pem),
        rogue_cert: write("rogue.pem", &rogue_cert),
        rogue_key: write("rogue.key", &rogue_key),
        _dir: dir,
    }
}

/// A P4Runtime server on `listen` over TLS from `files`; returns the address to dial.
async fn serve(listen: Listen, files: &ServerTlsFiles) -> String {
    let tls = files.load().unwrap();
    let device = LocalDevice::new(Box::new(Runtime::new(&PROGRAM)));
    let p4rt =
        P4RuntimeService::from_program(&PROGRAM, device, P4RuntimeConfig::default()).unwrap();
    let bound = Bound::bind(&listen).await.unwrap();
    let addr = match &listen {
        Listen::Tcp(_) => bound.local_addr().unwrap().to_string(),
        Listen::Unix(path) => format!("unix:{}", path.display()),
    };
    tokio::spawn(bound.serve_tls(Some(tls), Some(p4rt), None, std::future::pending()));
    addr
}

fn client(ca: &Path, identity: Option<(&Path, &Path)>) -> ClientTlsFiles {
    ClientTlsFiles {
        ca: ca.to_path_buf(),
        cert: identity.map(|(c, _)| c.to_path_buf()),
        key: identity.map(|(_, k)| k.to_path_buf()),
        domain: None,
    }
}

/// Capabilities over a fresh channel: the API version, or why it failed.
async fn capabilities(addr: &str, tls: Option<ClientTlsFiles>) -> Result<String, String> {
    let attempt = async {
        let tls = tls
            .map(|f| f.load())
            .transpose()
            .map_err(|e| e.to_string())?;
        let channel = control::client::connect_tls(addr, tls)
            .await
            .map_err(|e| format!("connect: {e:?}"))?;
        let mut c = pb::p4_runtime_client::P4RuntimeClient::new(channel);
        c.capabilities(pb::CapabilitiesRequest::default())
            .await
            .map(|r| r.into_inner().p4runtime_api_version)
            .map_err(|s| format!("rpc: {s}"))
    };
    tokio::time::timeout(Duration::from_secs(10), attempt)
        .await
        .map_err(|_| "timed out".to_string())?
}

fn loopback() -> Listen {
    Listen::Tcp("127.0.0.1:0".parse().unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_server_refuses_plain_and_untrusting_clients() {
    let pki = pki();
    let files = ServerTlsFiles {
        cert: pki.server_cert.clone(),
        key: pki.server_key.clone(),
        client_ca: None,
    };
    let addr = serve(loopback(), &files).await;

    let version = capabilities(&addr, Some(client(&pki.ca, None)))
        .await
        .expect("TLS client trusting the CA");
    assert_eq!(version.split('.').count(), 3, "{version}");

    let plain = capabilities(&addr, None).await;
    assert!(plain.is_err(), "plain-text client got {plain:?}");
    let untrusting = capabilities(&addr, Some(client(&pki.rogue_ca, None))).await;
    assert!(
        untrusting.is_err(),
        "client trusting another CA got {untrusting:?}"
    );
    // The certificate names localhost and 127.0.0.1, not another host.
    let mut wrong_name = client(&pki.ca, None);
    wrong_name.domain = Some("switch.example".into());
    let r = capabilities(&addr, Some(wrong_name)).await;
    assert!(r.is_err(), "server name mismatch accepted: {r:?}");
    // A TLS-only server still serves a client that presents a certificate.
    capabilities(
        &addr,
        Some(client(&pki.ca, Some((&pki.client_cert, &pki.client_key)))),
    )
    .await
    .expect("client certificate is optional without a client CA");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mutual_tls_requires_a_client_certificate_of_the_ca() {
    let pki = pki();
    let files = ServerTlsFiles {
        cert: pki.server_cert.clone(),
        key: pki.server_key.clone(),
        client_ca: Some(pki.ca.clone()),
    };
    let addr = serve(loopback(), &files).await;

    let ok = capabilities(
        &addr,
        Some(client(&pki.ca, Some((&pki.client_cert, &pki.client_key)))),
    )
    .await;
    assert!(ok.is_ok(), "client with a certificate of the CA: {ok:?}");

    let anonymous = capabilities(&addr, Some(client(&pki.ca, None))).await;
    assert!(
        anonymous.is_err(),
        "client without a certificate got {anonymous:?}"
    );
    let rogue = capabilities(
        &addr,
        Some(client(&pki.ca, Some((&pki.rogue_cert, &pki.rogue_key)))),
    )
    .await;
    assert!(
        rogue.is_err(),
        "client certificate of another CA got {rogue:?}"
    );
    let plain = capabilities(&addr, None).await;
    assert!(plain.is_err(), "plain-text client got {plain:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mutual_tls_over_a_unix_socket() {
    let pki = pki();
    let dir = tempfile::tempdir().unwrap();
    let files = ServerTlsFiles {
        cert: pki.server_cert.clone(),
        key: pki.server_key.clone(),
        client_ca: Some(pki.ca.clone()),
    };
    let addr = serve(Listen::Unix(dir.path().join("p4rt.sock")), &files).await;
    let ok = capabilities(
        &addr,
        Some(client(&pki.ca, Some((&pki.client_cert, &pki.client_key)))),
    )
    .await;
    assert!(ok.is_ok(), "mTLS over {addr}: {ok:?}");
    let anonymous = capabilities(&addr, Some(client(&pki.ca, None))).await;
    assert!(
        anonymous.is_err(),
        "client without a certificate got {anonymous:?}"
    );
    let plain = capabilities(&addr, None).await;
    assert!(plain.is_err(), "plain-text client got {plain:?}");
}

async fn rocectl(args: Vec<String>) -> std::process::Output {
    tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_rocectl"))
            .args(args)
            .output()
            .unwrap()
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rocectl_speaks_tls_and_mutual_tls() {
    let pki = pki();
    let files = ServerTlsFiles {
        cert: pki.server_cert.clone(),
        key: pki.server_key.clone(),
        client_ca: Some(pki.ca.clone()),
    };
    let addr = serve(loopback(), &files).await;
    let p = |p: &PathBuf| p.display().to_string();
    let base = vec![
        "--addr".to_string(),
        addr.clone(),
        "--ca".into(),
        p(&pki.ca),
    ];

    let mut args = base.clone();
    args.extend([
        "--cert".into(),
        p(&pki.client_cert),
        "--key".into(),
        p(&pki.client_key),
    ]);
    args.extend(["p4rt".into(), "capabilities".into()]);
    let out = rocectl(args).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "rocectl with a client certificate: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(stdout.trim().split('.').count(), 3, "{stdout}");

    let mut args = base.clone();
    args.extend(["p4rt".into(), "capabilities".into()]);
    let out = rocectl(args).await;
    assert_eq!(
        out.status.code(),
        Some(1),
        "rocectl without a client certificate must fail"
    );
    assert!(out.stdout.is_empty());
    // The refusal's cause is shown, not only "transport error" (which cause
    // depends on timing: the server's CertificateRequired alert or the
    // closed connection).
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("transport error: "), "{stderr}");

    let args = [
        "--addr",
        &addr,
        "--ca",
        "/nonexistent/ca.pem",
        "p4rt",
        "capabilities",
    ];
    let out = rocectl(args.iter().map(|s| s.to_string()).collect()).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("/nonexistent/ca.pem"), "{stderr}");
}

#[test]
fn bad_files_are_clear_errors() {
    let pki = pki();
    // Missing key file: the error names it.
    let e = ServerTlsFiles {
        cert: pki.server_cert.clone(),
        key: "/nonexistent/server.key".into(),
        client_ca: None,
    }
    .load()
    .unwrap_err();
    assert!(matches!(e, TlsError::Read { .. }), "{e}");
    assert!(
        e.to_string()
            .contains("private key /nonexistent/server.key"),
        "{e}"
    );
    // Certificate and key swapped: neither is what it should be.
    let e = ServerTlsFiles {
        cert: pki.server_key.clone(),
        key: pki.server_cert.clone(),
        client_ca: None,
    }
    .load()
    .unwrap_err();
    assert!(matches!(e, TlsError::NotPem { .. }), "{e}");
    // PEM armour around garbage: rustls refuses it, naming both files.
    let dir = tempfile::tempdir().unwrap();
    let bad_key = dir.path().join("bad.key");
    std::fs::write(
        &bad_key,
        "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
    )
    .unwrap();
    let e = ServerTlsFiles {
        cert: pki.server_cert.clone(),
        key: bad_key.clone(),
        client_ca: None,
    }
    .load()
    .unwrap_err();
    assert!(matches!(e, TlsError::Invalid { .. }), "{e}");
    assert!(
        e.to_string().contains(&bad_key.display().to_string()),
        "{e}"
    );
}

#[test]
fn roceswitch_stops_at_startup_on_a_bad_tls_file() {
    let pki = pki();
    // TLS files are read before any port is opened, so no interface is needed.
    let out = Command::new(env!("CARGO_BIN_EXE_roceswitch"))
        .args(["--port", "0=rl-no-such-if", "--grpc", "127.0.0.1:0"])
        .arg("--tls-cert")
        .arg(&pki.server_cert)
        .args(["--tls-key", "/nonexistent/switch.key"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("/nonexistent/switch.key"), "{stderr}");
    assert!(
        !stderr.contains("rl-no-such-if"),
        "ports opened before TLS was checked: {stderr}"
    );

    // The same settings from the TOML file.
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("switch.toml");
    std::fs::write(
        &config,
        format!(
            "grpc = \"127.0.0.1:0\"\ntls_cert = {:?}\ntls_key = \"/nonexistent/toml.key\"\n\
             [[port]]\nnumber = 0\niface = \"rl-no-such-if\"\n",
            pki.server_cert.display().to_string()
        ),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_roceswitch"))
        .arg("--config")
        .arg(&config)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("/nonexistent/toml.key"), "{stderr}");

    let out = Command::new(env!("CARGO_BIN_EXE_roceswitch"))
        .args(["--port", "0=rl-no-such-if", "--tls-client-ca"])
        .arg(&pki.ca)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("--tls-client-ca needs --tls-cert"),
        "{stderr}"
    );
}

/// True if we may create namespaces; otherwise says why the test is
/// skipped (fails under `ROCESWITCH_REQUIRE_ROOT`, as CI runs as root).
fn root_or_skip(test: &str) -> bool {
    dataplane::port::netns::namespaces_or_skip(test)
}

/// An `rl-` namespace holding a veth pair (the daemon's port is one end) and
/// the daemon; both go away on drop.
struct Lab {
    ns: String,
    daemon: Option<std::process::Child>,
}

impl Lab {
    fn new() -> Lab {
        let ns = format!("rl-tls{}", std::process::id() % 100_000);
        let lab = Lab { ns, daemon: None };
        lab.ip(&["netns", "add", &lab.ns]);
        lab.ip(&[
            "-n", &lab.ns, "link", "add", "d0", "type", "veth", "peer", "name", "d1",
        ]);
        lab.ip(&["-n", &lab.ns, "link", "set", "d0", "up"]);
        lab.ip(&["-n", &lab.ns, "link", "set", "d1", "up"]);
        lab
    }

    fn ip(&self, args: &[&str]) {
        let out = Command::new("ip").args(args).output().unwrap();
        assert!(
            out.status.success(),
            "ip {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        if let Some(mut child) = self.daemon.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        let _ = Command::new("ip").args(["netns", "del", &self.ns]).output();
    }
}

#[test]
fn roceswitch_serves_mutual_tls_to_rocectl() {
    if !root_or_skip("roceswitch_serves_mutual_tls_to_rocectl") {
        return;
    }
    let pki = pki();
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("p4rt.sock");
    let log = std::fs::File::create(dir.path().join("roceswitch.log")).unwrap();
    let mut lab = Lab::new();
    lab.daemon = Some(
        Command::new("ip")
            .args(["netns", "exec", &lab.ns, env!("CARGO_BIN_EXE_roceswitch")])
            .args(["--port", "0=d0", "--grpc"])
            .arg(format!("unix:{}", sock.display()))
            .arg("--tls-cert")
            .arg(&pki.server_cert)
            .arg("--tls-key")
            .arg(&pki.server_key)
            .arg("--tls-client-ca")
            .arg(&pki.ca)
            .stderr(log)
            .spawn()
            .unwrap(),
    );
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !sock.exists() {
        let exited = lab.daemon.as_mut().unwrap().try_wait().unwrap();
        let text = std::fs::read_to_string(dir.path().join("roceswitch.log")).unwrap_or_default();
        assert!(exited.is_none(), "roceswitch exited early: {text}");
        assert!(
            std::time::Instant::now() < deadline,
            "no socket after 20 s: {text}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let addr = format!("unix:{}", sock.display());
    let rocectl = |identity: bool| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_rocectl"));
        cmd.args(["--addr", &addr, "--ca"]).arg(&pki.ca);
        if identity {
            cmd.arg("--cert").arg(&pki.client_cert);
            cmd.arg("--key").arg(&pki.client_key);
        }
        cmd.args(["p4rt", "capabilities"]).output().unwrap()
    };
    let out = rocectl(true);
    assert!(
        out.status.success(),
        "rocectl with a client certificate: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = rocectl(false);
    assert_eq!(
        out.status.code(),
        Some(1),
        "rocectl without a client certificate: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let log = std::fs::read_to_string(dir.path().join("roceswitch.log")).unwrap_or_default();
    assert!(
        log.contains("tls=\"mutual\"") || log.contains("tls=mutual"),
        "{log}"
    );
}
