//! The connections of `serve_http`: HTTP/1.1 on hyper, bounded in number,
//! each closed when a request's headers take too long to arrive or when it
//! sits idle between requests for as long.
//!
//! `axum::serve` sets neither: without a timer hyper waits for headers for
//! ever, so a client that opens connections and trickles their headers (a
//! "slowloris") would hold them, and the file descriptors, for ever.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, watch};

/// The bounds of the connections.
pub(super) struct Limits {
    /// How long a request's headers may take, counted from the
    /// connection's start or the end of the previous response.
    pub(super) header_timeout: Duration,
    /// How many connections may be open at once.
    pub(super) max_connections: usize,
}

/// Accepts connections on `listener` and serves `router` on each, until
/// the future is dropped: then no connection is accepted, and each open one
/// is shut down gracefully (it closes once its response in progress is
/// written).
pub(super) async fn serve_connections(mut listener: TcpListener, router: axum::Router, limits: Limits) -> Infallible {
    let places = Arc::new(Semaphore::new(limits.max_connections.clamp(1, Semaphore::MAX_PERMITS)));
    // Dropped with this future, which tells every connection to finish.
    let (_running, stopped) = watch::channel(());
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .keep_alive(true);
    loop {
        // While every place is taken, new connections wait in the
        // listener's queue.
        let Ok(place) = places.clone().acquire_owned().await else {
            unreachable!("the semaphore is never closed")
        };
        // axum's accept: an error of one connection is skipped, any other
        // (too many open files, say) is logged and retried after a second.
        let (stream, _peer) = axum::serve::Listener::accept(&mut listener).await;
        let connection = http.serve_connection(TokioIo::new(stream), TowerToHyperService::new(router.clone()));
        let mut stopped = stopped.clone();
        tokio::spawn(async move {
            let _place = place;
            let mut connection = std::pin::pin!(connection);
            tokio::select! {
                // A client that goes away, or takes too long, is no error
                // of the server's.
                ended = connection.as_mut() => {
                    if let Err(e) = ended {
                        tracing::debug!("an MCP connection ended: {e}");
                    }
                }
                _ = stopped.changed() => {
                    connection.as_mut().graceful_shutdown();
                    let _ = connection.await;
                }
            }
        });
    }
}
