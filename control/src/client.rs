//! Dialling the services, for tools and tests: `unix:/path` (a filesystem
//! Unix socket, usable across network namespaces) or `HOST:PORT` /
//! `http://HOST:PORT` over TCP; in plain text, or over TLS / mutual TLS
//! with a configuration from [`crate::tls::ClientTlsFiles`] (the server's
//! name is then checked against the address's host, `localhost` for a Unix
//! socket, unless the configuration names another).

use hyper_util::rt::TokioIo;
use tonic::transport::{Channel, ClientTlsConfig, Endpoint, Uri};

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
                    Ok::<_, std::io::Error>(TokioIo::new(
                        tokio::net::UnixStream::connect(path).await?,
                    ))
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
        endpoint.connect().await
    }
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
