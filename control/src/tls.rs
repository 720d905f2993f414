//! Optional TLS and mutual TLS for the gRPC listener and its clients
//! (rustls with the ring provider, through tonic's `tls-ring` feature; the
//! P4Runtime spec's "Security considerations" leave transport security to
//! gRPC's TLS).
//!
//! Contract: every file is PEM and is read once, when the configuration is
//! built, so a bad path or an unreadable/empty/invalid PEM is an error that
//! names the file at startup rather than a failed handshake later.
//! * Server: a certificate chain and its private key; with a client CA,
//!   mutual TLS is required (a client without a certificate signed by that
//!   CA is refused during the handshake).
//! * Client: the CA that signed the server's certificate, optionally a
//!   client certificate and key (for mTLS), and the name to check the
//!   server's certificate against (default: the address's host; `localhost`
//!   for `unix:` addresses).
//!
//! No roots are loaded from the system and nothing is downloaded.

use std::path::{Path, PathBuf};

use tonic::transport::{Certificate, ClientTlsConfig, Identity, ServerTlsConfig};

/// Why a TLS configuration could not be built.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// A file could not be read.
    #[error("TLS {what} {}: {source}", path.display())]
    Read {
        /// Which file it was (certificate, private key, CA).
        what: &'static str,
        /// Its path.
        path: PathBuf,
        /// Cause.
        source: std::io::Error,
    },
    /// A file holds no PEM block of the expected kind.
    #[error("TLS {what} {}: no PEM {label} block found", path.display())]
    NotPem {
        /// Which file it was.
        what: &'static str,
        /// Its path.
        path: PathBuf,
        /// The PEM label looked for (`CERTIFICATE`, `PRIVATE KEY`).
        label: &'static str,
    },
    /// rustls refused the certificate/key pair or the CA.
    #[error("TLS certificate {} / key {}: {reason}", cert.display(), key.display())]
    Invalid {
        /// The certificate file.
        cert: PathBuf,
        /// The key file.
        key: PathBuf,
        /// rustls's reason (the whole error chain).
        reason: String,
    },
    /// A client certificate without a key, or the reverse.
    #[error("a TLS client certificate needs its key and a key its certificate (give both)")]
    Incomplete,
}

/// The PEM files of a TLS server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerTlsFiles {
    /// Certificate chain (leaf first).
    pub cert: PathBuf,
    /// Private key of the leaf certificate.
    pub key: PathBuf,
    /// CA for client certificates; `Some` requires mutual TLS.
    pub client_ca: Option<PathBuf>,
}

impl ServerTlsFiles {
    /// Reads and checks the files: the configuration for
    /// [`crate::serve::Bound::serve_tls`].
    pub fn load(&self) -> Result<ServerTlsConfig, TlsError> {
        let cert = read_pem(&self.cert, "certificate", "CERTIFICATE")?;
        let key = read_pem(&self.key, "private key", "PRIVATE KEY")?;
        let mut config = ServerTlsConfig::new().identity(Identity::from_pem(cert, key));
        if let Some(ca) = &self.client_ca {
            let ca = read_pem(ca, "client CA", "CERTIFICATE")?;
            config = config.client_ca_root(Certificate::from_pem(ca));
        }
        // tonic parses the PEM only when the acceptor is built: build one now
        // so a bad key or certificate fails here, naming the files.
        tonic::transport::Server::builder()
            .tls_config(config.clone())
            .map_err(|e| TlsError::Invalid {
                cert: self.cert.clone(),
                key: self.key.clone(),
                reason: error_chain(&e),
            })?;
        Ok(config)
    }
}

/// The PEM files of a TLS client.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClientTlsFiles {
    /// CA that signed the server's certificate.
    pub ca: PathBuf,
    /// Client certificate (mutual TLS).
    pub cert: Option<PathBuf>,
    /// Client certificate's key (mutual TLS).
    pub key: Option<PathBuf>,
    /// Server name to verify instead of the address's host.
    pub domain: Option<String>,
}

impl ClientTlsFiles {
    /// Reads and checks the files: the configuration for
    /// [`crate::client::connect_tls`].
    pub fn load(&self) -> Result<ClientTlsConfig, TlsError> {
        let ca = read_pem(&self.ca, "CA", "CERTIFICATE")?;
        let mut config = ClientTlsConfig::new().ca_certificate(Certificate::from_pem(ca));
        match (&self.cert, &self.key) {
            (Some(cert), Some(key)) => {
                let cert = read_pem(cert, "client certificate", "CERTIFICATE")?;
                let key = read_pem(key, "client private key", "PRIVATE KEY")?;
                config = config.identity(Identity::from_pem(cert, key));
            }
            (None, None) => {}
            _ => return Err(TlsError::Incomplete),
        }
        if let Some(domain) = &self.domain {
            config = config.domain_name(domain.clone());
        }
        Ok(config)
    }
}

/// Reads `path` and checks it holds a PEM block whose label ends with `label`
/// (`PRIVATE KEY` matches PKCS#8, RSA and EC keys).
fn read_pem(path: &Path, what: &'static str, label: &'static str) -> Result<Vec<u8>, TlsError> {
    let bytes = std::fs::read(path).map_err(|source| TlsError::Read {
        what,
        path: path.to_path_buf(),
        source,
    })?;
    let text = String::from_utf8_lossy(&bytes);
    let found = text.lines().any(|line| {
        line.strip_prefix("-----BEGIN ")
            .and_then(|rest| rest.strip_suffix("-----"))
            .is_some_and(|l| l.ends_with(label))
    });
    if !found {
        return Err(TlsError::NotPem {
            what,
            path: path.to_path_buf(),
            label,
        });
    }
    Ok(bytes)
}

/// An error and its sources, `a: b: c` (tonic's transport error alone says
/// only "transport error").
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        s.push_str(": ");
        s.push_str(&cause.to_string());
        source = cause.source();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_file_names_the_path() {
        let files = ServerTlsFiles {
            cert: "/nonexistent/server.pem".into(),
            key: "/nonexistent/server.key".into(),
            client_ca: None,
        };
        let e = files.load().unwrap_err().to_string();
        assert!(e.contains("certificate /nonexistent/server.pem"), "{e}");
    }

    #[test]
    fn non_pem_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let cert = dir.path().join("cert.pem");
        std::fs::write(&cert, "not a certificate\n").unwrap();
        let files = ClientTlsFiles {
            ca: cert.clone(),
            ..Default::default()
        };
        let e = files.load().unwrap_err().to_string();
        assert!(e.contains("no PEM CERTIFICATE block"), "{e}");
        assert!(e.contains(&cert.display().to_string()), "{e}");
    }

    #[test]
    fn pem_labels_match_by_suffix() {
        let dir = tempfile::tempdir().unwrap();
        let key = dir.path().join("k.pem");
        std::fs::write(
            &key,
            "-----BEGIN EC PRIVATE KEY-----\nAAAA\n-----END EC PRIVATE KEY-----\n",
        )
        .unwrap();
        assert!(read_pem(&key, "key", "PRIVATE KEY").is_ok());
        assert!(read_pem(&key, "cert", "CERTIFICATE").is_err());
    }

    #[test]
    fn client_cert_without_key_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let ca = dir.path().join("ca.pem");
        std::fs::write(
            &ca,
            "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
        )
        .unwrap();
        let files = ClientTlsFiles {
            ca,
            cert: Some("c.pem".into()),
            ..Default::default()
        };
        assert!(matches!(files.load(), Err(TlsError::Incomplete)));
    }
}
