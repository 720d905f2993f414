//! Dialling the services, for tools and tests: `unix:/path` (a filesystem
//! Unix socket, usable across network namespaces) or `HOST:PORT` /
//! `http://HOST:PORT` over TCP.

use hyper_util::rt::TokioIo;
use tonic::transport::{Channel, Endpoint, Uri};

/// Connects a gRPC channel to `addr`.
pub async fn connect(addr: &str) -> Result<Channel, tonic::transport::Error> {
    if let Some(path) = addr.strip_prefix("unix:") {
        let path = std::path::PathBuf::from(path);
        // The URI is required by the API but unused: the connector dials the path.
        Endpoint::from_static("http://localhost")
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
        let uri = if addr.contains("://") {
            addr.to_string()
        } else {
            format!("http://{addr}")
        };
        Endpoint::from_shared(uri)?.connect().await
    }
}
