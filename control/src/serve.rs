//! Running the gRPC services on a TCP address or a filesystem Unix socket
//! (reference §2.4 and pitfall 11: a path socket crosses network-namespace
//! boundaries, so the switch in one namespace and PTF/p4runtime-shell/finsy
//! in another need no management IP network; clients dial `unix:/path`).
//! Unknown services (finsy's gNMI) get UNIMPLEMENTED from the router.
//! Either listener can serve over TLS or mutual TLS ([`Bound::serve_tls`],
//! configuration from [`crate::tls`]); a client that does not complete the
//! handshake gets no service.

use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;

use crate::fabric::FabricService;
use crate::p4rt::P4RuntimeService;

/// Where to listen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Listen {
    /// A TCP address (`127.0.0.1:9559`; port 0 picks one).
    Tcp(SocketAddr),
    /// A filesystem Unix socket; a stale socket file is replaced.
    Unix(PathBuf),
}

impl std::str::FromStr for Listen {
    type Err = std::net::AddrParseError;

    /// `unix:/path` or `HOST:PORT`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.strip_prefix("unix:") {
            Some(path) => Ok(Listen::Unix(PathBuf::from(path))),
            None => s.parse().map(Listen::Tcp),
        }
    }
}

/// Why serving failed.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// Binding the listener.
    #[error("listen on {what}: {source}")]
    Bind {
        /// The address or path.
        what: String,
        /// Cause.
        source: std::io::Error,
    },
    /// The gRPC server.
    #[error(transparent)]
    Transport(#[from] tonic::transport::Error),
}

/// A bound listener: its address is known before serving starts.
#[derive(Debug)]
pub enum Bound {
    /// TCP.
    Tcp(tokio::net::TcpListener),
    /// Unix socket.
    Unix(tokio::net::UnixListener, PathBuf),
}

impl Bound {
    /// Binds `listen`.
    pub async fn bind(listen: &Listen) -> Result<Bound, ServeError> {
        match listen {
            Listen::Tcp(addr) => tokio::net::TcpListener::bind(addr)
                .await
                .map(Bound::Tcp)
                .map_err(|source| ServeError::Bind {
                    what: addr.to_string(),
                    source,
                }),
            Listen::Unix(path) => {
                let what = path.display().to_string();
                if path.exists() {
                    std::fs::remove_file(path).map_err(|source| ServeError::Bind {
                        what: what.clone(),
                        source,
                    })?;
                }
                tokio::net::UnixListener::bind(path)
                    .map(|l| Bound::Unix(l, path.clone()))
                    .map_err(|source| ServeError::Bind { what, source })
            }
        }
    }

    /// The TCP address actually bound (for port 0), if TCP.
    pub fn local_addr(&self) -> Option<SocketAddr> {
        match self {
            Bound::Tcp(l) => l.local_addr().ok(),
            Bound::Unix(..) => None,
        }
    }

    /// Serves the given services in plain text until `shutdown` completes.
    pub async fn serve(
        self,
        p4rt: Option<P4RuntimeService>,
        fabric: Option<FabricService>,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), ServeError> {
        self.serve_tls(None, p4rt, fabric, shutdown).await
    }

    /// Serves the given services until `shutdown` completes, over TLS when
    /// `tls` is given (mutual TLS if it names a client CA).
    pub async fn serve_tls(
        self,
        tls: Option<tonic::transport::ServerTlsConfig>,
        p4rt: Option<P4RuntimeService>,
        fabric: Option<FabricService>,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), ServeError> {
        let mut server = tonic::transport::Server::builder();
        if let Some(tls) = tls {
            server = server.tls_config(tls)?;
        }
        let router = server
            .add_optional_service(p4rt.map(P4RuntimeService::into_server))
            .add_optional_service(fabric.map(FabricService::into_server));
        match self {
            Bound::Tcp(l) => {
                router
                    .serve_with_incoming_shutdown(
                        tokio_stream::wrappers::TcpListenerStream::new(l),
                        shutdown,
                    )
                    .await?
            }
            Bound::Unix(l, path) => {
                let r = router
                    .serve_with_incoming_shutdown(
                        tokio_stream::wrappers::UnixListenerStream::new(l),
                        shutdown,
                    )
                    .await;
                let _ = std::fs::remove_file(path);
                r?
            }
        }
        Ok(())
    }
}
