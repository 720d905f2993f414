//! Dialling the services, for tools and tests: `unix:/path` (a filesystem
//! Unix socket, usable across network namespaces) or `HOST:PORT` /
//! `http://HOST:PORT` over TCP; in plain text, or over TLS / mutual TLS
//! with a configuration from [`crate::tls::ClientTlsFiles`] (the server's
//! name is then checked against the address's host, `localhost` for a Unix
//! socket, unless the configuration names another).
//!
//! The connection writes what hyper writes in one turn of the runtime in
//! one system call (the crate's `coalesce` module), so a unary call's
//! headers and message reach the server together.

use hyper_util::rt::TokioIo;
use tonic::transport::{Channel, ClientTlsConfig, Endpoint, Uri};

use crate::coalesce::Coalesce;

/// Connects a plain-text gRPC channel to `addr`.
pub async fn connect(addr: &str) -> Result<Channel, tonic::transport::Error> {
    connect_tls(addr, None).await
}

/// Connects a gRPC channel to `addr`, over TLS when `tls` is given.
pub async fn connect_tls(
    addr: &str,
    tls: Option<ClientTlsConfig>,
) -> Result<Channel, tonic::transport::Error> {
    let scheme = if tls.is_some() { "https" } else { "http" };
    if let Some(path) = addr.strip_prefix("unix:") {
        let path = std::path::PathBuf::from(path);
        // The URI only names the TLS server (and the :authority); the
        // connector dials the path.
        let mut endpoint = Endpoint::from_shared(format!("{scheme}://localhost"))?;
        if let Some(tls) = tls {
            endpoint = endpoint.tls_config(tls)?;
        }
        endpoint
            .connect_with_connector(tower::service_fn(move |_: Uri| {
                let path = path.clone();
                async move {
                    let stream = tokio::net::UnixStream::connect(path).await?;
                    Ok::<_, std::io::Error>(TokioIo::new(Coalesce::new(stream)))
                }
            }))
            .await
    } else {
        let uri = match addr.split_once("://") {
            // An explicit http:// still gets TLS when TLS is configured.
            Some((_, rest)) => format!("{scheme}://{rest}"),
            None => format!("{scheme}://{addr}"),
        };
        let mut endpoint = Endpoint::from_shared(uri)?;
        if let Some(tls) = tls {
            endpoint = endpoint.tls_config(tls)?;
        }
        endpoint
            .connect_with_connector(tower::service_fn(|uri: Uri| async move {
                let stream = tokio::net::TcpStream::connect(tcp_target(&uri)?).await?;
                // As tonic's own connector: no Nagle, a request is not held
                // back for the server's ACK of the last one.
                stream.set_nodelay(true)?;
                Ok::<_, std::io::Error>(TokioIo::new(Coalesce::new(stream)))
            }))
            .await
    }
}

/// The `host:port` a TCP channel dials for `uri` (port 443 for https and
/// 80 for http when the address names none, as tonic's connector does).
fn tcp_target(uri: &Uri) -> std::io::Result<String> {
    let host = uri.host().ok_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{uri}: no host to connect to"),
        )
    })?;
    let port = uri
        .port_u16()
        .unwrap_or(if uri.scheme_str() == Some("https") {
            443
        } else {
            80
        });
    Ok(format!("{host}:{port}"))
}

/// The canonical name of a gRPC status code (`NOT_FOUND`), as the gRPC and
/// P4Runtime specifications and other tools print it.
pub fn code_name(code: tonic::Code) -> &'static str {
    use tonic::Code;
    match code {
        Code::Ok => "OK",
        Code::Cancelled => "CANCELLED",
        Code::Unknown => "UNKNOWN",
        Code::InvalidArgument => "INVALID_ARGUMENT",
        Code::DeadlineExceeded => "DEADLINE_EXCEEDED",
        Code::NotFound => "NOT_FOUND",
        Code::AlreadyExists => "ALREADY_EXISTS",
        Code::PermissionDenied => "PERMISSION_DENIED",
        Code::ResourceExhausted => "RESOURCE_EXHAUSTED",
        Code::FailedPrecondition => "FAILED_PRECONDITION",
        Code::Aborted => "ABORTED",
        Code::OutOfRange => "OUT_OF_RANGE",
        Code::Unimplemented => "UNIMPLEMENTED",
        Code::Internal => "INTERNAL",
        Code::Unavailable => "UNAVAILABLE",
        Code::DataLoss => "DATA_LOSS",
        Code::Unauthenticated => "UNAUTHENTICATED",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tcp_target_keeps_the_port_and_brackets_and_defaults_by_scheme() {
        let target = |u: &str| tcp_target(&u.parse().unwrap()).unwrap();
        assert_eq!(target("http://127.0.0.1:9559"), "127.0.0.1:9559");
        assert_eq!(target("http://[::1]:9559"), "[::1]:9559");
        assert_eq!(target("http://switch"), "switch:80");
        assert_eq!(target("https://switch"), "switch:443");
        // What TcpStream::connect is given must parse as a socket address.
        let v6: std::net::SocketAddr = target("http://[::1]:9559").parse().unwrap();
        assert_eq!(v6.port(), 9559);
    }
}
