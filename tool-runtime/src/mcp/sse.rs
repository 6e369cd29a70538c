//! The legacy HTTP+SSE transport (protocol revision 2024-11-05), client
//! side, for `sse` entries: rmcp has no client for it.
//!
//! The client opens a stream of server-sent events with `GET`. The
//! server's first event, `endpoint`, names the URL (on the same origin) the
//! client posts each of its messages to; the server's messages, answers
//! included, come back as `message` events on the stream. The connection
//! ends with the stream. Messages are posted one at a time, in the order
//! sent: each `POST` is a connection of its own, and a cancellation that
//! overtook its call would reach a server that knows no such call.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;

use axum::body::Bytes;
use futures_util::{Stream, StreamExt as _};
use mcp_reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderValue};
use mcp_reqwest::{Client, Url};
use rmcp::service::{RoleClient, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;

use tokio::sync::{mpsc, oneshot};

use super::McpError;
use crate::sse::{SseEvent, SseParser};

/// A connection to a legacy SSE server, as an rmcp transport.
pub(crate) struct SseTransport {
    client: Client,
    headers: HeaderMap,
    /// Where messages are posted, as the `endpoint` event said.
    endpoint: Url,
    /// The messages to post, in order; the task posting them ends when
    /// this is dropped.
    posts: mpsc::UnboundedSender<Post>,
    /// The server's events; `None` once closed.
    events: Option<Events>,
    /// How many `message` events were no JSON-RPC message: the first is
    /// logged at `warn`, the others at `debug`, counted, so a server that
    /// sends nothing else cannot flood the log.
    unreadable: u64,
}

impl SseTransport {
    /// Opens the event stream at `url` and waits for its `endpoint` event.
    /// `headers` go with every request.
    pub(crate) async fn connect(client: Client, url: &str, headers: HeaderMap) -> Result<Self, McpError> {
        let url =
            Url::parse(url).map_err(|e| McpError::config(format!("the url `{}`: {e}", crate::text::clip(url))))?;
        let response = client
            .get(url.clone())
            .headers(headers.clone())
            .header(ACCEPT, HeaderValue::from_static("text/event-stream"))
            .send()
            .await
            .map_err(McpError::protocol)?;
        let status = response.status();
        if !status.is_success() {
            return Err(McpError::peer(format!(
                "the event stream was refused with HTTP {status}"
            )));
        }
        // A relative endpoint is read against where the stream came from,
        // after any redirect.
        let base = response.url().clone();
        let mut events = Events {
            body: Box::pin(response.bytes_stream().fuse()),
            parser: SseParser::default(),
            ready: VecDeque::new(),
        };
        let endpoint = loop {
            match events.next().await {
                Some(Ok(event)) if event.event == "endpoint" => break event.data,
                Some(Ok(_)) => continue,
                Some(Err(e)) => return Err(e),
                None => return Err(McpError::peer("the event stream ended before its `endpoint` event")),
            }
        };
        let endpoint = base.join(endpoint.trim()).map_err(|e| {
            McpError::peer(format!(
                "the endpoint `{}` is no URL: {e}",
                crate::text::clip(&endpoint)
            ))
        })?;
        // The headers (a token, say) go there too.
        if endpoint.origin() != url.origin() {
            return Err(McpError::peer(format!(
                "the endpoint `{}` is on another origin than the event stream",
                crate::text::clip(endpoint.as_str())
            )));
        }
        let (posts, queue) = mpsc::unbounded_channel();
        tokio::spawn(post_in_order(queue));
        Ok(SseTransport {
            client,
            headers,
            endpoint,
            posts,
            events: Some(events),
            unreadable: 0,
        })
    }
}

/// One message to post, and where its outcome goes.
struct Post {
    request: mcp_reqwest::RequestBuilder,
    done: oneshot::Sender<Result<(), McpError>>,
}

/// How long a server has to accept one posted message: the next waits for
/// it, so a server that never answers a `POST` holds up no more than this.
const POST_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// Posts the queued messages one at a time, each once the one before it
/// was answered (or given up), until the transport is gone.
async fn post_in_order(mut queue: mpsc::UnboundedReceiver<Post>) {
    while let Some(Post { request, done }) = queue.recv().await {
        let posted = async {
            let response = tokio::time::timeout(POST_TIMEOUT, request.send())
                .await
                .map_err(|_| {
                    McpError::peer(format!(
                        "a message was not accepted within {} seconds",
                        POST_TIMEOUT.as_secs()
                    ))
                })?
                .map_err(McpError::protocol)?;
            let status = response.status();
            if !status.is_success() {
                return Err(McpError::peer(format!("a message was refused with HTTP {status}")));
            }
            Ok(())
        };
        let _ = done.send(posted.await);
    }
}

impl Transport<RoleClient> for SseTransport {
    type Error = McpError;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), McpError>> + Send + 'static {
        let request = self
            .client
            .post(self.endpoint.clone())
            .headers(self.headers.clone())
            .header(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        // Queued now, as rmcp sends, not when the future is first polled:
        // rmcp runs the futures of its sends side by side.
        let queued = serde_json::to_vec(&item).map_err(McpError::protocol).and_then(|body| {
            let (done, outcome) = oneshot::channel();
            let post = Post {
                request: request.body(body),
                done,
            };
            match self.posts.send(post) {
                Ok(()) => Ok(outcome),
                Err(_) => Err(McpError::peer("the connection to the server is closed")),
            }
        });
        async move {
            match queued?.await {
                Ok(posted) => posted,
                Err(_) => Err(McpError::peer("the connection to the server is closed")),
            }
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            let event = match self.events.as_mut()?.next().await? {
                Ok(event) => event,
                Err(error) => {
                    tracing::warn!(%error, "the MCP server's event stream failed");
                    self.events = None;
                    return None;
                }
            };
            if event.event != "message" {
                continue;
            }
            match serde_json::from_str(&event.data) {
                Ok(message) => return Some(message),
                Err(error) => {
                    self.unreadable += 1;
                    let unreadable = self.unreadable;
                    if unreadable == 1 {
                        tracing::warn!(%error, "an event of the MCP server is no JSON-RPC message; skipped (any more are logged at debug)");
                    } else {
                        tracing::debug!(%error, unreadable, "another event of the MCP server is no JSON-RPC message; skipped");
                    }
                }
            }
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), McpError>> + Send {
        self.events = None;
        std::future::ready(Ok(()))
    }
}

/// The events of a response body.
struct Events {
    /// Fused: polled again after its end, it ends again.
    body: Pin<Box<dyn Stream<Item = Result<Bytes, mcp_reqwest::Error>> + Send>>,
    parser: SseParser,
    /// Events read whole, not yet taken.
    ready: VecDeque<SseEvent>,
}

impl Events {
    /// The next event; `None` when the stream ends.
    async fn next(&mut self) -> Option<Result<SseEvent, McpError>> {
        loop {
            if let Some(event) = self.ready.pop_front() {
                return Some(Ok(event));
            }
            match self.body.next().await {
                Some(Ok(chunk)) => match self.parser.feed(&chunk) {
                    Ok(events) => self.ready.extend(events),
                    Err(e) => return Some(Err(McpError::peer(e.to_string()))),
                },
                Some(Err(e)) => return Some(Err(McpError::protocol(e))),
                // An event the stream did not close with a blank line
                // still counts.
                None => return self.parser.finish().map(Ok),
            }
        }
    }
}
