//! Running the gRPC services on a TCP address or a filesystem Unix socket
//! (reference §2.4 and pitfall 11: a path socket crosses network-namespace
//! boundaries, so the switch in one namespace and PTF/p4runtime-shell/finsy
//! in another need no management IP network; clients dial `unix:/path`).
//! Unknown services (finsy's gNMI) get UNIMPLEMENTED from the router.
//! Either listener can serve over TLS or mutual TLS ([`Bound::serve_tls`],
//! configuration from [`crate::tls`]); a client that does not complete the
//! handshake gets no service. A connection writes the replies finished in
//! one turn of the runtime in one system call (the crate's `coalesce`
//! module): the answers of a group of Writes committed together reach the
//! client in one write, and wake it once.

use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;

use tokio_stream::StreamExt;

use crate::coalesce::Coalesce;
use crate::fabric::FabricService;
use crate::p4rt::P4RuntimeService;

/// HTTP/2 streams one connection may have open at once.
pub const MAX_H2_STREAMS: u32 = 256;

/// Where the daemon listens and clients dial when told nothing else:
/// P4Runtime's IANA port on loopback, where p4runtime-shell, PTF and the
/// reference switch's tooling look first.
pub const DEFAULT_ADDR: &str = "127.0.0.1:9559";

/// The environment variable the daemon and its clients read for the
/// address (`unix:/path` or `HOST:PORT`) when no flag gives one.
pub const ADDR_ENV: &str = "ROCESWITCH_ADDR";

/// Mode of a socket directory the daemon creates: owner and group only,
/// so the socket's reach is the directory's group.
const SOCKET_DIR_MODE: u32 = 0o750;

/// Where to listen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Listen {
    /// A TCP address (`127.0.0.1:9559`; port 0 picks one).
    Tcp(SocketAddr),
    /// A filesystem Unix socket; a stale socket file is replaced, missing
    /// directories are created with mode 0750, the socket is removed on exit.
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

impl std::fmt::Display for Listen {
    /// The form [`Listen::from_str`](std::str::FromStr) reads.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Listen::Tcp(addr) => write!(f, "{addr}"),
            Listen::Unix(path) => write!(f, "unix:{}", path.display()),
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

/// Creates `dir` (and missing parents) with mode 0750 if it does not exist.
fn create_socket_dir(dir: &std::path::Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    if dir.is_dir() {
        return Ok(());
    }
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(SOCKET_DIR_MODE)
        .create(dir)
}

/// Hands a Unix socket and its directory to `group` (a name or a numeric
/// gid): both become group-owned, the socket mode 0660, so members of the
/// group reach the daemon without root.
pub fn grant_group(socket: &std::path::Path, group: &str) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let gid = resolve_group(group)?;
    let dirs = socket.parent().into_iter();
    for path in dirs.chain(std::iter::once(socket)) {
        std::os::unix::fs::chown(path, None, Some(gid))?;
    }
    std::fs::set_permissions(socket, std::fs::Permissions::from_mode(0o660))
}

/// The gid of `group`: a number, or a name looked up in the group database.
fn resolve_group(group: &str) -> std::io::Result<u32> {
    if let Ok(gid) = group.parse() {
        return Ok(gid);
    }
    let not_found = || {
        std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!("no group named {group:?}"),
        )
    };
    let name = std::ffi::CString::new(group).map_err(|_| not_found())?;
    let mut grp = std::mem::MaybeUninit::<libc::group>::uninit();
    let mut buf = vec![0 as libc::c_char; 16 * 1024];
    let mut result: *mut libc::group = std::ptr::null_mut();
    // SAFETY: every pointer is valid for the call: `name` is NUL-terminated,
    // `grp` and `buf` outlive it and `buf.len()` is its size; getgrnam_r
    // writes only into them and sets `result` to `grp` or null.
    let rc = unsafe {
        libc::getgrnam_r(
            name.as_ptr(),
            grp.as_mut_ptr(),
            buf.as_mut_ptr(),
            buf.len(),
            &mut result,
        )
    };
    if rc != 0 {
        return Err(std::io::Error::from_raw_os_error(rc));
    }
    if result.is_null() {
        return Err(not_found());
    }
    // SAFETY: getgrnam_r returned success with a non-null result: `grp` is initialised.
    Ok(unsafe { grp.assume_init() }.gr_gid)
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
                if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                    create_socket_dir(dir).map_err(|source| ServeError::Bind {
                        what: format!("{what} (creating {})", dir.display()),
                        source,
                    })?;
                }
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
        // Bounded per connection: a client cannot open streams without end
        // (the P4Runtime service bounds its StreamChannels across them).
        let mut server =
            tonic::transport::Server::builder().max_concurrent_streams(Some(MAX_H2_STREAMS));
        if let Some(tls) = tls {
            server = server.tls_config(tls)?;
        }
        let router = server
            .add_optional_service(p4rt.map(P4RuntimeService::into_server))
            .add_optional_service(fabric.map(FabricService::into_server));
        match self {
            Bound::Tcp(l) => {
                // No Nagle: a Write's reply (headers, message, trailers)
                // must not wait for the client's ACK.
                let incoming =
                    tonic::transport::server::TcpIncoming::from(l).with_nodelay(Some(true));
                router
                    .serve_with_incoming_shutdown(
                        incoming.map(|conn| conn.map(Coalesce::new)),
                        shutdown,
                    )
                    .await?
            }
            Bound::Unix(l, path) => {
                let incoming = tokio_stream::wrappers::UnixListenerStream::new(l);
                let r = router
                    .serve_with_incoming_shutdown(
                        incoming.map(|conn| conn.map(Coalesce::new)),
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
