//! MCP over streamable HTTP: a tower service to mount on an axum router,
//! and a ready server.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, Method, Request, Response, StatusCode, header};
use rmcp::model::RequestId;
use rmcp::transport::StreamableHttpServerConfig;
use rmcp::transport::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::{SessionId, SessionManager as _};

use super::McpError;
use super::connections::{Limits, serve_connections};
use super::order::Lines;
use super::server::{Handler, McpServer};
use super::sessions::Sessions;
use crate::registry::ToolRegistry;

/// How the HTTP endpoint checks who is talking to it.
///
/// The default suits a server on loopback: `Host` must be `localhost`,
/// `127.0.0.1` or `[::1]` (any port), which defeats DNS rebinding; a
/// request that carries an `Origin` (a browser's) must come from one of
/// those hosts too; no token is asked for. A server reachable from other
/// machines names its hosts with [`HttpOptions::allow_hosts`] and should
/// ask for a token. At most [`DEFAULT_MAX_SESSIONS`] sessions are open at
/// once unless [`HttpOptions::max_sessions`] says otherwise, and a session
/// idle for 30 minutes ends ([`HttpOptions::session_idle_timeout`]).
/// [`McpServer::serve_http`] and [`McpServer::serve_http_on`] also bound
/// the connections: how long a request's headers may take and an idle
/// connection may stay open ([`HttpOptions::header_timeout`]) and how many
/// are open at once ([`HttpOptions::max_connections`]).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct HttpOptions {
    hosts: Vec<String>,
    origins: Vec<String>,
    token: Option<Arc<str>>,
    public: bool,
    max_sessions: usize,
    body_timeout: Duration,
    session_idle: Duration,
    header_timeout: Duration,
    max_connections: usize,
}

/// How many sessions the HTTP endpoint keeps open at once by default.
pub const DEFAULT_MAX_SESSIONS: usize = 1024;

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            hosts: vec!["localhost".into(), "127.0.0.1".into(), "::1".into()],
            origins: vec![
                "http://localhost:*".into(),
                "http://127.0.0.1:*".into(),
                "http://[::1]:*".into(),
            ],
            token: None,
            public: false,
            max_sessions: DEFAULT_MAX_SESSIONS,
            body_timeout: Duration::from_secs(30),
            session_idle: Duration::from_secs(30 * 60),
            header_timeout: Duration::from_secs(30),
            max_connections: 1024,
        }
    }
}

impl HttpOptions {
    /// Loopback hosts and origins only, no token.
    pub fn new() -> Self {
        HttpOptions::default()
    }

    /// Accepts these `Host` values (`name` or `name:port`) instead of the
    /// loopback ones; needed to serve on an address other than loopback.
    /// An empty list changes nothing: the `Host` check is never turned off.
    pub fn allow_hosts<I: IntoIterator<Item = S>, S: Into<String>>(mut self, hosts: I) -> Self {
        let hosts: Vec<String> = hosts.into_iter().map(Into::into).collect();
        if !hosts.is_empty() {
            self.hosts = hosts;
            self.public = true;
        }
        self
    }

    /// Accepts requests whose `Origin` is one of these
    /// (`scheme://host:port`, `:*` for any port) instead of the loopback
    /// ones. A request without `Origin` (not from a browser) always passes
    /// this check.
    pub fn allow_origins<I: IntoIterator<Item = S>, S: Into<String>>(mut self, origins: I) -> Self {
        self.origins = origins.into_iter().map(Into::into).collect();
        self
    }

    /// Requires `Authorization: Bearer <token>` on every request; others
    /// get 401.
    pub fn bearer_token(mut self, token: impl Into<String>) -> Self {
        self.token = Some(token.into().into());
        self
    }

    /// Keeps at most `max` sessions open at once (at least one). While
    /// that many are open, a client that asks for a new one (an
    /// `initialize` without `Mcp-Session-Id`) takes the place of a session
    /// that was never used (no request made in it after `initialize`, and
    /// none heard of for ten seconds, or half the idle time if shorter;
    /// the one waiting longest), so a client that opens sessions in a loop
    /// takes no place from one that uses its session; when no session can
    /// make room, it gets 503 and the sessions already open go on. A session ends when its client ends it (`DELETE`) or when it
    /// has been idle for the
    /// [`session_idle_timeout`](HttpOptions::session_idle_timeout).
    pub fn max_sessions(mut self, max: usize) -> Self {
        self.max_sessions = max.max(1);
        self
    }

    /// Ends a session that has been idle for `limit` (30 minutes by
    /// default; at most a quarter of it, or a minute, later): no request
    /// came for it that long, and none of its event streams is open. A
    /// session whose call is still running, however long, with the stream
    /// of its answer open, or whose client listens on its `GET` stream, is
    /// never idle; once the client drops a running call's stream, the
    /// session may end, and the call with it. A client that comes back
    /// to an ended session gets 404 and must initialize a new one, which
    /// some clients do not do on their own; so this bounds what clients
    /// that leave without `DELETE` hold, more than it saves memory.
    /// `Duration::MAX` keeps idle sessions until they are ended.
    pub fn session_idle_timeout(mut self, limit: Duration) -> Self {
        self.session_idle = limit;
        self
    }

    /// How long a client may take to send one request's body; 30 seconds
    /// by default. A client that sends its headers and then trickles the
    /// body, or stops, gets 408 when it runs out, instead of holding the
    /// connection and its buffer for ever; every real client sends a
    /// message at once.
    pub fn body_timeout(mut self, limit: Duration) -> Self {
        self.body_timeout = limit;
        self
    }

    /// How long a client of [`McpServer::serve_http`] or
    /// [`McpServer::serve_http_on`] may take to send a request's headers,
    /// and how long a kept-alive connection may wait for its next request;
    /// 30 seconds by default. The connection is closed when it runs out,
    /// so a client that opens connections and trickles their headers (or
    /// sends nothing) cannot hold them for ever. A request in progress,
    /// an event stream among them, is not bounded by it. (A
    /// [`McpHttpService`] mounted on a router of your own is served by
    /// your server, under its limits.)
    pub fn header_timeout(mut self, limit: Duration) -> Self {
        self.header_timeout = limit;
        self
    }

    /// Keeps at most `max` connections open at once (at least one; 1,024
    /// by default) in [`McpServer::serve_http`] and
    /// [`McpServer::serve_http_on`]: while that many are open, a new one
    /// waits in the listener's queue until one closes. Each client's open
    /// `GET` event stream holds a connection.
    pub fn max_connections(mut self, max: usize) -> Self {
        self.max_connections = max.max(1);
        self
    }
}

/// The MCP endpoint as a tower service: mount it on an axum router at any
/// path with `Router::route_service("/mcp", service)`. It answers `POST`
/// (requests), `GET` (the server's event stream) and `DELETE` (end of a
/// session) of the streamable HTTP transport, for every revision a client
/// speaks over it (2024-11-05 on). The older HTTP+SSE transport (a `GET`
/// event stream and a separate `POST` endpoint) is not served.
///
/// One message a request: a JSON-RPC batch (a JSON array) is refused with
/// 400 and error `-32600`. Event streams carry messages only; no event
/// without data is sent for a client to resume the stream by. Each event
/// carries an `id`, and rmcp keeps a session's recent events in memory, so
/// a `GET` with `Last-Event-ID` takes up a call's answer still to come.
///
/// Browsers: the service answers no CORS preflight (`OPTIONS`) and sets
/// no `Access-Control-*` header, so a client running in a web page needs
/// it wrapped in a CORS layer of your own (tower-http's `CorsLayer`, say)
/// that answers preflights from the page's origin, allows the request
/// headers `Content-Type`, `Accept`, `Authorization`, `Mcp-Session-Id`,
/// `Mcp-Protocol-Version` and `Last-Event-ID`, and exposes
/// `Mcp-Session-Id`; that origin must also be one of
/// [`HttpOptions::allow_origins`]. [`McpServer::serve_http`] and
/// [`McpServer::serve_http_on`] answer no preflight either, so they serve
/// no client in a browser.
#[derive(Clone)]
pub struct McpHttpService {
    inner: StreamableHttpService<Handler, Sessions>,
    sessions: Arc<Sessions>,
    token: Option<Arc<str>>,
    registry: Arc<ToolRegistry>,
    max_body_bytes: usize,
    body_timeout: Duration,
}

impl std::fmt::Debug for McpHttpService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpHttpService")
            .field("hosts", &self.inner.config.allowed_hosts)
            .field("origins", &self.inner.config.allowed_origins)
            .field("token", &self.token.as_ref().map(|_| "<set>"))
            .finish()
    }
}

impl McpServer {
    /// The HTTP endpoint of this server, checked as `options` say.
    pub fn http_service(self, options: HttpOptions) -> McpHttpService {
        // No priming events (an event with empty data sent first on each
        // stream, for a client to resume it): without an event store
        // nothing can be resumed, and clients older than protocol
        // 2025-11-25 read the empty data as a message and fail. The
        // sessions' streams have their own switch (see `sessions`).
        let config = StreamableHttpServerConfig::default()
            .with_sse_retry(None)
            .with_allowed_hosts(options.hosts)
            .with_allowed_origins(options.origins)
            .enforce_origin_validation()
            .with_max_request_body_bytes(self.inner.max_message_bytes);
        let max_body_bytes = self.inner.max_message_bytes;
        let registry = self.inner.registry.clone();
        let sessions = Sessions::new(options.max_sessions, options.session_idle);
        // A handler for each session.
        let inner = StreamableHttpService::new(move || Ok(Handler::new(self.clone())), sessions.clone(), config);
        McpHttpService {
            inner,
            sessions,
            token: options.token,
            registry,
            max_body_bytes,
            body_timeout: options.body_timeout,
        }
    }

    /// Serves on `addr` at the path `/mcp` with the default
    /// [`HttpOptions`], as [`McpServer::serve_http_on`] does. `addr` must
    /// be a loopback address; use [`McpServer::serve_http_on`] with named
    /// hosts for any other.
    pub async fn serve_http(self, addr: SocketAddr) -> Result<(), McpError> {
        let listener = tokio::net::TcpListener::bind(addr).await.map_err(McpError::io)?;
        self.serve_http_on(listener, HttpOptions::default()).await
    }

    /// Serves HTTP/1.1 on an open listener at the path `/mcp` until the
    /// future is dropped; it returns only an error, at the start. A
    /// listener on an address other than loopback needs
    /// [`HttpOptions::allow_hosts`]. The connections are bounded in time
    /// and number ([`HttpOptions::header_timeout`],
    /// [`HttpOptions::max_connections`]).
    ///
    /// Dropping the future (in a `select!` with a shutdown signal, say)
    /// stops the server: no new connection is accepted, every session
    /// ends (calls still running are cancelled, event streams close), and
    /// each connection closes once the response it is writing is written.
    pub async fn serve_http_on(self, listener: tokio::net::TcpListener, options: HttpOptions) -> Result<(), McpError> {
        let addr = listener.local_addr().map_err(McpError::io)?;
        if !addr.ip().is_loopback() && !options.public {
            return Err(McpError::config(format!(
                "refusing to serve MCP on {addr}, which is not a loopback address, without HttpOptions::allow_hosts"
            )));
        }
        let limits = Limits {
            header_timeout: options.header_timeout,
            max_connections: options.max_connections,
        };
        let service = self.http_service(options);
        // Cancelled when this future is dropped: rmcp then ends every
        // session and closes its streams.
        let _end_sessions = service.inner.config.cancellation_token.clone().drop_guard();
        let router = axum::Router::new().route_service("/mcp", service);
        match serve_connections(listener, router, limits).await {}
    }
}

impl tower_service::Service<Request<Body>> for McpHttpService {
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response<Body>, Infallible>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<Body>) -> Self::Future {
        if let Some(token) = &self.token
            && !authorized(&request, token)
        {
            let mut response = plain(StatusCode::UNAUTHORIZED, "a valid bearer token is required");
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            return Box::pin(std::future::ready(Ok(response)));
        }
        let mut inner = self.inner.clone();
        let registry = self.registry.clone();
        let sessions = self.sessions.clone();
        let (max_body_bytes, body_timeout) = (self.max_body_bytes, self.body_timeout);
        Box::pin(async move {
            let (parts, body) = match read_body(request, max_body_bytes, body_timeout).await {
                Ok(read) => read,
                Err(refused) => return Ok(refused),
            };
            let asked = request_in_session(&parts, &body);
            let opens = opens_session(&parts, &body);
            let full = || {
                plain(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "too many MCP sessions are open; try again later",
                )
            };
            if opens && sessions.refuses_new().await {
                return Ok(full());
            }
            // Ending a session that is not open (ended, reaped, never
            // made) is 404, as the transport says; rmcp would answer 202.
            // rmcp judges the request first, so a forbidden origin is 403
            // whether the session exists or not.
            let ends_unknown = match parts.headers.get("mcp-session-id").and_then(|id| id.to_str().ok()) {
                Some(id) if parts.method == Method::DELETE => {
                    !sessions.has_session(&SessionId::from(id)).await.unwrap_or(false)
                }
                _ => false,
            };
            let sent_json = parts.method == Method::POST && is_json(&parts.headers);
            let request = Request::from_parts(parts, Body::from(body.clone()));
            let response = match tower_service::Service::call(&mut inner, request).await {
                Ok(response) => response,
                Err(never) => match never {},
            };
            if ends_unknown && response.status().is_success() {
                return Ok(plain(
                    StatusCode::NOT_FOUND,
                    "no MCP session has this id; it may have ended",
                ));
            }
            if response.status() == StatusCode::INTERNAL_SERVER_ERROR {
                // Two sessions opened at once for the last place: the one
                // that lost it is refused as the check above refuses, not
                // with rmcp's 500.
                if opens && sessions.refuses_new().await {
                    return Ok(full());
                }
                // The session refused a request of an id still running
                // there (after rmcp's own checks, Origin and Host first).
                if let Some((session, id)) = &asked
                    && sessions.running(session, id)
                {
                    return Ok(reused_id(id));
                }
            }
            // rmcp answers a JSON body that is no JSON-RPC message with
            // 415, as if its type were wrong; JSON-RPC says what it is.
            if sent_json && response.status() == StatusCode::UNSUPPORTED_MEDIA_TYPE {
                return Ok(not_a_message(&body));
            }
            Ok(ordered(response.map(Body::new), registry))
        })
    }
}

/// The request's head and its whole body, read within `limit` and
/// `max_bytes`; else the answer that refuses it (408, 413).
async fn read_body(
    request: Request<Body>,
    max_bytes: usize,
    limit: Duration,
) -> Result<(Parts, Bytes), Response<Body>> {
    let (parts, body) = request.into_parts();
    match tokio::time::timeout(limit, axum::body::to_bytes(body, max_bytes)).await {
        Ok(Ok(bytes)) => Ok((parts, bytes)),
        // Too large, or the client broke the body off.
        Ok(Err(_)) => Err(plain(
            StatusCode::PAYLOAD_TOO_LARGE,
            "the request body is larger than this server takes, or was broken off",
        )),
        Err(_) => Err(plain(
            StatusCode::REQUEST_TIMEOUT,
            "the request body did not arrive in time",
        )),
    }
}

/// Whether the request would open a session: an `initialize` posted
/// without `Mcp-Session-Id`. (A request of a revision without sessions
/// carries no id either, and opens none.)
fn opens_session(parts: &Parts, body: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Named {
        method: Option<String>,
    }
    parts.method == Method::POST
        && !parts.headers.contains_key("mcp-session-id")
        && serde_json::from_slice::<Named>(body).is_ok_and(|m| m.method.as_deref() == Some("initialize"))
}

/// The session and id of a request posted to a session; `None` for any
/// other message.
fn request_in_session(parts: &Parts, body: &[u8]) -> Option<(SessionId, RequestId)> {
    #[derive(serde::Deserialize)]
    struct Request {
        id: RequestId,
        #[expect(dead_code, reason = "read only to tell a request from a response")]
        method: String,
    }
    if parts.method != Method::POST {
        return None;
    }
    let session = parts.headers.get("mcp-session-id")?.to_str().ok()?;
    let request = serde_json::from_slice::<Request>(body).ok()?;
    Some((SessionId::from(session), request.id))
}

/// The answer to a request posted to a session with the id of a request
/// still running there, which the session refuses: rmcp would give the
/// second one's answer the first one's place and leave the first one's
/// stream waiting for ever. 400 with error `-32600`.
fn reused_id(id: &RequestId) -> Response<Body> {
    let message = format!(
        "Invalid Request: a request of id {} is still running in this session; give each request an id of its own",
        crate::text::clip(&id.to_string())
    );
    jsonrpc_error(-32600, &message, serde_json::to_value(id).ok())
}

/// Whether the body is declared JSON (`application/json`, any parameters).
fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| {
            let essence = value.split_once(';').map_or(value, |(essence, _)| essence);
            essence.trim().eq_ignore_ascii_case("application/json")
        })
}

/// The answer to a posted body that is no JSON-RPC message: 400 with the
/// JSON-RPC error, `-32700` for text that is no JSON, `-32600` for JSON
/// that is no message (a batch among them, which this server does not
/// take); its id when one can be read, else none (MCP's ids are never
/// `null`). Over stdio rmcp answers such JSON with `-32600` and no id,
/// and ignores text that is no JSON, as the other official SDKs do: a
/// line there has no response of its own to carry the error.
fn not_a_message(body: &[u8]) -> Response<Body> {
    let (code, message, id) = match serde_json::from_slice::<serde_json::Value>(body) {
        // JSON nested deeper than the parser goes (128 levels) is still
        // JSON: the request is refused, not the text.
        Err(e) if e.to_string().starts_with("recursion limit exceeded") => (
            -32600,
            "Invalid Request: the message is nested too deeply (more than 128 levels)".to_owned(),
            None,
        ),
        Err(e) => (-32700, format!("Parse error: the body is not JSON ({e})"), None),
        Ok(serde_json::Value::Array(_)) => (
            -32600,
            "Invalid Request: JSON-RPC batches are not supported; send one message per request".to_owned(),
            None,
        ),
        Ok(value) => {
            let id = value
                .get("id")
                .filter(|id| id.is_string() || id.is_i64() || id.is_u64())
                .cloned();
            (
                -32600,
                "Invalid Request: the body is not a JSON-RPC 2.0 request, notification or response".to_owned(),
                id,
            )
        }
    };
    jsonrpc_error(code, &message, id)
}

/// 400 with a JSON-RPC error, carrying `id` when there is one.
fn jsonrpc_error(code: i64, message: &str, id: Option<serde_json::Value>) -> Response<Body> {
    let mut error = serde_json::json!({"jsonrpc": "2.0", "error": {"code": code, "message": message}});
    if let Some(id) = id {
        error["id"] = id;
    }
    let mut response = Response::new(Body::from(error.to_string()));
    *response.status_mut() = StatusCode::BAD_REQUEST;
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// A response of `status` with a line of text.
fn plain(status: StatusCode, text: &'static str) -> Response<Body> {
    let mut response = Response::new(Body::from(text));
    *response.status_mut() = status;
    response
}

/// The response with the tools of a `tools/list` answer in declaration
/// order (see `order`), whether it comes as JSON or as server-sent events.
fn ordered(mut response: Response<Body>, registry: Arc<ToolRegistry>) -> Response<Body> {
    use futures_util::StreamExt as _;

    let messages = response.headers().get(header::CONTENT_TYPE).is_some_and(|t| {
        let t = t.as_bytes();
        t.starts_with(b"text/event-stream") || t.starts_with(b"application/json")
    });
    if !messages {
        return response;
    }
    // The length may change.
    response.headers_mut().remove(header::CONTENT_LENGTH);
    response.map(|body| {
        let start = Some((body.into_data_stream(), Lines::default()));
        let stream = futures_util::stream::unfold(start, move |state| {
            let registry = registry.clone();
            async move {
                let (mut data, mut lines) = state?;
                loop {
                    match data.next().await {
                        Some(Ok(chunk)) => {
                            let out = lines.push(&chunk, &registry);
                            if !out.is_empty() {
                                return Some((Ok(Bytes::from(out)), Some((data, lines))));
                            }
                        }
                        Some(Err(e)) => return Some((Err(e), None)),
                        None => {
                            let rest = lines.finish(&registry);
                            return (!rest.is_empty()).then(|| (Ok(Bytes::from(rest)), None));
                        }
                    }
                }
            }
        });
        Body::from_stream(stream)
    })
}

/// Whether the request carries `Authorization: Bearer <token>`, the scheme
/// in any case (RFC 7235), compared in a time that depends only on the
/// expected token: neither where the first difference is nor the length
/// of what was sent shows in it.
fn authorized(request: &Request<Body>, token: &str) -> bool {
    let Some(value) = request.headers().get(header::AUTHORIZATION) else {
        return false;
    };
    let Some(given) = bearer_credentials(value.as_bytes()) else {
        return false;
    };
    let expected = token.as_bytes();
    let differs = expected
        .iter()
        .enumerate()
        .fold(u8::from(given.len() != expected.len()), |acc, (i, b)| {
            acc | (given.get(i).copied().unwrap_or(0) ^ b)
        });
    differs == 0
}

/// The credentials of an `Authorization` value of the `Bearer` scheme,
/// whose name is case-insensitive and followed by one or more spaces
/// (RFC 7235, section 2.1).
pub(super) fn bearer_credentials(value: &[u8]) -> Option<&[u8]> {
    let (scheme, rest) = value.split_at_checked(6)?;
    if !scheme.eq_ignore_ascii_case(b"bearer") || rest.first() != Some(&b' ') {
        return None;
    }
    let start = rest.iter().position(|&b| b != b' ')?;
    Some(&rest[start..])
}
