//! Serving a registry over MCP: the protocol handler shared by stdio and
//! streamable HTTP.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rmcp::ErrorData;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientRequest, CustomRequest, CustomResult, ErrorCode,
    Implementation, JsonRpcMessage, ListToolsResult, PaginatedRequestParams, ProtocolVersion, ServerCapabilities,
    ServerConfig, SubscriptionFilter,
};
use rmcp::service::{NotificationContext, RequestContext, RoleServer, SubscriptionContext};
use serde_json::{Map, Value, json};
use tokio::sync::Semaphore;

use super::McpError;
use crate::blocking::Work;
use crate::call::{CallArguments, ToolCall};
use crate::context::Cancellation;
use crate::format::{Format, Selection, mcp};
use crate::registry::ToolRegistry;
use crate::result::{Outcome, ToolResult};

/// Largest JSON-RPC message read by default: 4 MiB (four times the
/// registry's default argument limit).
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 4 << 20;

/// Most `tools/call` requests in flight by default (running or waiting for
/// the registry's concurrency limit); more are refused with an error result.
pub const DEFAULT_MAX_IN_FLIGHT: usize = 64;

/// Serves the tools of a [`ToolRegistry`] over MCP, on stdio
/// ([`McpServer::serve_stdio`]) or streamable HTTP
/// ([`McpServer::serve_http`], [`McpServer::http_service`]).
///
/// Every request runs on its own task, and every tool call on a thread of
/// its own, so a tool that computes without yielding never holds up a
/// `ping`, a cancellation or another call. Calls obey the registry's time
/// limit (counted from the request's arrival, and kept even for a tool
/// that never yields: its thread runs on as a stray, see
/// [`ToolRegistry::with_max_stray_blocking_calls`]) and concurrency limit;
/// `notifications/cancelled` reaches the tool's
/// [`ToolContext`](crate::ToolContext). Invalid arguments, `arguments`
/// that are no JSON object among them, are `isError` results that list
/// every problem; an unknown tool, or a call without a string `name`, is a
/// protocol error (`-32602`). A JSON-RPC batch (a JSON array, which MCP
/// dropped in revision 2025-06-18) is refused with `-32600`, over both
/// transports. A structured result whose JSON is longer than the
/// registry's output limit, or that breaks its output schema, is answered
/// as [`format::mcp::reply`](crate::format::mcp::reply) says: an `isError`
/// result with the text and without the structured content.
///
/// ```no_run
/// # fn registry() -> tool_runtime::ToolRegistry { tool_runtime::ToolRegistry::new() }
/// #[tokio::main]
/// async fn main() -> Result<(), tool_runtime::mcp::McpError> {
///     tool_runtime::mcp::McpServer::new(registry())
///         .with_info("my-tools", "1.0.0")
///         .serve_stdio()
///         .await
/// }
/// ```
#[derive(Clone)]
pub struct McpServer {
    pub(crate) inner: Arc<Inner>,
}

/// A copy shares the registry and the semaphores (the limits) until a
/// builder method of the copy replaces them.
#[derive(Clone)]
pub(crate) struct Inner {
    pub(crate) registry: Arc<ToolRegistry>,
    selection: Selection,
    name: String,
    version: String,
    instructions: Option<String>,
    pub(crate) max_message_bytes: usize,
    in_flight: Arc<Semaphore>,
    max_in_flight: usize,
    running: Arc<Semaphore>,
}

impl McpServer {
    /// A server of every tool in `registry`, named after this crate.
    pub fn new(registry: ToolRegistry) -> Self {
        McpServer::from_arc(Arc::new(registry))
    }

    /// A server of a registry shared with other code.
    pub fn from_arc(registry: Arc<ToolRegistry>) -> Self {
        // A limit above what a semaphore can count is no limit.
        let concurrency = registry.settings.concurrency.clamp(1, Semaphore::MAX_PERMITS);
        McpServer {
            inner: Arc::new(Inner {
                registry,
                selection: Selection::all(),
                name: env!("CARGO_PKG_NAME").to_owned(),
                version: env!("CARGO_PKG_VERSION").to_owned(),
                instructions: None,
                max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
                in_flight: Arc::new(Semaphore::new(DEFAULT_MAX_IN_FLIGHT)),
                max_in_flight: DEFAULT_MAX_IN_FLIGHT,
                running: Arc::new(Semaphore::new(concurrency)),
            }),
        }
    }

    /// Changes this server's settings; a server cloned before keeps its
    /// own.
    fn edit(mut self, change: impl FnOnce(&mut Inner)) -> Self {
        change(Arc::make_mut(&mut self.inner));
        self
    }

    /// The name and version the server gives clients.
    pub fn with_info(self, name: impl Into<String>, version: impl Into<String>) -> Self {
        let (name, version) = (name.into(), version.into());
        self.edit(|inner| {
            inner.name = name;
            inner.version = version;
        })
    }

    /// Instructions the client may show the model.
    pub fn with_instructions(self, instructions: impl Into<String>) -> Self {
        let instructions = instructions.into();
        self.edit(|inner| inner.instructions = Some(instructions))
    }

    /// Offers only the tools `selection` takes (the others cannot be called).
    pub fn with_selection(self, selection: Selection) -> Self {
        self.edit(|inner| inner.selection = selection)
    }

    /// Bounds the size of one incoming message (a stdio line, an HTTP body).
    /// On stdio the line's end is not counted, so a line ended by a lone
    /// `\n` may carry one byte more. Larger messages are refused with 413
    /// (HTTP) or dropped (stdio):
    /// a line too long gets no answer, not even an error, since its id
    /// is not read (rmcp logs it at `error` level), so the client's
    /// request waits until the client gives up on it.
    pub fn with_max_message_bytes(self, bytes: usize) -> Self {
        self.edit(|inner| inner.max_message_bytes = bytes.max(1024))
    }

    /// Bounds the `tools/call` requests in flight, waiting ones included;
    /// a call beyond it gets an `isError` result at once.
    pub fn with_max_in_flight(self, calls: usize) -> Self {
        let calls = calls.clamp(1, Semaphore::MAX_PERMITS);
        self.edit(|inner| {
            inner.in_flight = Arc::new(Semaphore::new(calls));
            inner.max_in_flight = calls;
        })
    }

    /// The registry served.
    pub fn registry(&self) -> &ToolRegistry {
        &self.inner.registry
    }

    /// Serves on this process's stdin and stdout until stdin closes. Write
    /// any logging to stderr: stdout carries the protocol.
    ///
    /// Each call runs on a thread of Tokio's blocking pool, and a tool
    /// that never yields runs on there after its time limit. Dropping a
    /// runtime waits for those threads, so with `#[tokio::main]` such a
    /// tool keeps the process alive after stdin closes until the tool
    /// ends. To exit regardless, build the runtime yourself and end it
    /// with [`Runtime::shutdown_timeout`](tokio::runtime::Runtime::shutdown_timeout):
    ///
    /// ```no_run
    /// # fn registry() -> tool_runtime::ToolRegistry { tool_runtime::ToolRegistry::new() }
    /// fn main() -> Result<(), tool_runtime::mcp::McpError> {
    ///     let runtime = tokio::runtime::Runtime::new().expect("a Tokio runtime");
    ///     let server = tool_runtime::mcp::McpServer::new(registry());
    ///     let served = runtime.block_on(server.serve_stdio());
    ///     // Calls still running get a second to end, then are left behind.
    ///     runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    ///     served
    /// }
    /// ```
    pub async fn serve_stdio(self) -> Result<(), McpError> {
        let (read, write) = rmcp::transport::stdio();
        self.serve(read, write).await
    }

    /// Serves one connection, one JSON-RPC message a line, until `read`
    /// ends.
    pub async fn serve<R, W>(self, read: R, write: W) -> Result<(), McpError>
    where
        R: tokio::io::AsyncRead + Send + Unpin + 'static,
        W: tokio::io::AsyncWrite + Send + Unpin + 'static,
    {
        use rmcp::ServiceExt as _;
        // rmcp writes into a pipe; what comes out goes to `write` with the
        // tools of a `tools/list` answer in declaration order.
        let (rmcp_end, our_end) = tokio::io::duplex(64 * 1024);
        let pump = tokio::spawn(pump(our_end, write, self.inner.clone()));
        let transport = rmcp::transport::async_rw::AsyncRwTransport::new_server(read, rmcp_end)
            // A line's length counts its end, `\n` or `\r\n`.
            .with_max_line_length(self.inner.max_message_bytes.saturating_add(2));
        let served = async {
            let handler = Handler::new(self);
            let transport = FromFirstRequest {
                inner: transport,
                versions: rmcp::Service::<RoleServer>::supported_protocol_versions(&handler),
                started: false,
                unsent: Arc::new(tokio::sync::watch::Sender::new(0)),
            };
            let running = match handler.serve(transport).await {
                Ok(running) => running,
                // Input that ends before a session starts is a client that
                // went away, not a failure of the server.
                Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
                Err(e) => return Err(McpError::protocol(e)),
            };
            running.waiting().await.map_err(McpError::protocol)?;
            Ok(())
        }
        .await;
        // The transport is gone, so the pipe ends and the pump drains it.
        let pumped = pump.await.map_err(|e| McpError::io(std::io::Error::other(e)))?;
        served.and(pumped.map_err(McpError::io))
    }
}

/// A connection's transport with what the client sends before its session
/// starts dropped: rmcp ends the connection on a notification or a
/// response met before then (a stray `notifications/initialized`, say),
/// while JSON-RPC answers neither and MCP only asks clients not to send
/// them.
///
/// It also reads no more requests while [`MAX_UNSENT`] messages wait to be
/// written: rmcp reads on and holds every answer in a task of its own, so
/// a client that writes requests and never reads would grow the server
/// without limit.
struct FromFirstRequest<T> {
    inner: T,
    /// The protocol versions the handler speaks.
    versions: std::borrow::Cow<'static, [ProtocolVersion]>,
    /// A request that starts a session came: the connection is rmcp's
    /// from here.
    started: bool,
    /// How many messages handed to `send` are not written yet.
    unsent: Arc<tokio::sync::watch::Sender<usize>>,
}

/// The most messages of one connection waiting to be written before its
/// requests are read no further.
const MAX_UNSENT: usize = 64;

/// One message waiting to be written, counted until dropped.
struct Unsent(Arc<tokio::sync::watch::Sender<usize>>);

impl Unsent {
    fn new(unsent: &Arc<tokio::sync::watch::Sender<usize>>) -> Self {
        unsent.send_modify(|n| *n += 1);
        Unsent(unsent.clone())
    }
}

impl Drop for Unsent {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n -= 1);
    }
}

impl<T> FromFirstRequest<T> {
    /// Whether rmcp starts a session on `request`, as its handshake
    /// decides: on `initialize`, or on a request other than `ping` and
    /// `server/discover` that carries complete metadata of a version
    /// spoken here. It answers any other request and waits on.
    fn starts_session(&self, request: &ClientRequest) -> bool {
        use rmcp::model::GetMeta as _;
        match request {
            ClientRequest::InitializeRequest(_) => true,
            ClientRequest::PingRequest(_) | ClientRequest::DiscoverRequest(_) => false,
            request => {
                let meta = request.get_meta();
                meta.missing_required_keys(&ProtocolVersion::V_2026_07_28).is_empty()
                    && meta
                        .protocol_version()
                        .is_some_and(|version| self.versions.contains(&version))
            }
        }
    }
}

impl<T: rmcp::transport::Transport<RoleServer>> rmcp::transport::Transport<RoleServer> for FromFirstRequest<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: rmcp::service::TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), T::Error>> + Send + 'static {
        let unsent = Unsent::new(&self.unsent);
        let send = self.inner.send(item);
        async move {
            let sent = send.await;
            drop(unsent);
            sent
        }
    }

    async fn receive(&mut self) -> Option<rmcp::service::RxJsonRpcMessage<RoleServer>> {
        loop {
            // The sender lives as long as `self`, so the wait cannot fail.
            let _ = self.unsent.subscribe().wait_for(|&n| n < MAX_UNSENT).await;
            let message = self.inner.receive().await?;
            match &message {
                _ if self.started => {}
                JsonRpcMessage::Request(request) => self.started = self.starts_session(&request.request),
                _ => {
                    tracing::debug!("MCP message before the first request dropped");
                    continue;
                }
            }
            return Some(message);
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), T::Error>> + Send {
        self.inner.close()
    }
}

/// Copies the server's output to `write` until the pipe ends, ordering
/// `tools/list` answers on the way (see `order`).
async fn pump<W>(mut from: tokio::io::DuplexStream, mut write: W, inner: Arc<Inner>) -> std::io::Result<()>
where
    W: tokio::io::AsyncWrite + Unpin,
{
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let mut lines = super::order::Lines::default();
    let mut buffer = vec![0; 64 * 1024];
    loop {
        let read = from.read(&mut buffer).await?;
        if read == 0 {
            write.write_all(&lines.finish(&inner.registry)).await?;
            return write.flush().await;
        }
        let out = lines.push(&buffer[..read], &inner.registry);
        if !out.is_empty() {
            write.write_all(&out).await?;
            write.flush().await?;
        }
    }
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer")
            .field("name", &self.inner.name)
            .field("tools", &self.inner.registry.len())
            .finish_non_exhaustive()
    }
}

/// The rmcp handler of one connection (an HTTP session, a stdio
/// stream); kept private so rmcp's types stay out of the API.
#[derive(Clone)]
pub(crate) struct Handler {
    server: McpServer,
    /// Set once the connection is told of tool changes: a client that
    /// sends `notifications/initialized` again starts no second watch.
    watching: Arc<AtomicBool>,
    /// One permit per subscription the connection may hold open at once
    /// (see [`MAX_SUBSCRIPTIONS`]).
    subscriptions: Arc<Semaphore>,
}

/// The most `subscriptions/listen` requests one connection (or session)
/// may hold open at once: each is a task until its client ends it, and
/// is sent every change.
const MAX_SUBSCRIPTIONS: usize = 16;

impl Handler {
    /// The handler of a new connection.
    pub(crate) fn new(server: McpServer) -> Self {
        Handler {
            server,
            watching: Arc::new(AtomicBool::new(false)),
            subscriptions: Arc::new(Semaphore::new(MAX_SUBSCRIPTIONS)),
        }
    }
}

impl Inner {
    fn offered(&self, name: &str) -> bool {
        self.registry
            .get(name)
            .is_some_and(|tool| self.selection.includes(tool.definition()))
    }

    /// Runs one call on a thread of its own, within the time limit (from
    /// now) and the concurrency limit, stopped by `cancel`.
    ///
    /// The limit is kept here, on the request's task, not on the call's
    /// thread: a tool that computes without yielding holds that thread,
    /// where no timer can fire. A call given up at its limit is told to
    /// stop; its thread, which cannot be stopped, runs on and is counted
    /// with the registry's stray blocking calls until it ends.
    async fn call(self: Arc<Self>, call: ToolCall, cancel: Cancellation) -> ToolResult {
        let name = call.name.clone();
        let Ok(_in_flight) = self.in_flight.clone().try_acquire_owned() else {
            return ToolResult::failure(
                &name,
                None,
                Outcome::ToolFailed,
                format!(
                    "The server is busy: {} calls are in flight already. Try again shortly.",
                    self.max_in_flight
                ),
            );
        };
        let Some(limit) = self.registry.settings.timeout else {
            return self.run(call, cancel).await;
        };
        match tokio::time::timeout(limit, self.clone().run(call, cancel.clone())).await {
            Ok(result) => result,
            Err(_) => {
                cancel.cancel();
                let text = format!(
                    "The tool `{name}` did not finish within {} seconds and was told to stop.",
                    limit.as_secs_f64()
                );
                ToolResult::failure(&name, None, Outcome::TimedOut, text)
            }
        }
    }

    /// Waits for the concurrency limit, then runs the call on a thread of
    /// the blocking pool, so a tool that never yields cannot stall the
    /// executor that answers pings and cancellations. Every call holds such
    /// a thread, so the registry's bound on stray blocking calls holds for
    /// every tool served here.
    async fn run(self: Arc<Self>, call: ToolCall, cancel: Cancellation) -> ToolResult {
        let name = call.name.clone();
        let cancelled = || ToolResult::failure(&name, None, Outcome::Cancelled, "The call was cancelled.".into());
        // A call cancelled while it waits gives its place up at once.
        let _running = tokio::select! {
            permit = self.running.clone().acquire_owned() => match permit {
                Ok(permit) => permit,
                Err(_) => unreachable!("the semaphore is never closed"),
            },
            () = cancel.cancelled() => return cancelled(),
        };
        if cancel.is_cancelled() {
            return cancelled();
        }
        // Every call here runs on a thread of its own, async tools too (so
        // that one computing without yielding holds up nothing): at the
        // bound on such threads still running past their limit, a call is
        // refused rather than run on the runtime, where such a tool would
        // stall a worker and escape its time limit. Plain `fn` bodies past
        // their limit hold up only plain `fn` tools (the registry refuses
        // those): async tools keep being served.
        let strays = Work::CallThread.stray_count();
        if strays >= self.registry.settings.max_stray_blocking_calls {
            let text = format!(
                "The tool `{name}` was not run: {strays} earlier calls are still running past their time limit. Try again later."
            );
            return ToolResult::failure(&name, None, Outcome::Overloaded, text);
        }
        let registry = self.registry.clone();
        let runtime = tokio::runtime::Handle::current();
        let work = move || runtime.block_on(registry.call_cancellable(call, &cancel));
        match crate::blocking::run(Work::CallThread, work).await {
            Ok(result) => result,
            Err(e) => ToolResult::failure(&name, None, Outcome::Panicked, format!("The call did not finish: {e}")),
        }
    }
}

/// How long a call whose request the client cancelled may take to end
/// before it is given up.
pub(super) const CANCEL_GRACE: std::time::Duration = std::time::Duration::from_secs(1);

/// How often a connection told of tool changes is checked for having
/// closed, when no change comes.
const CLOSED_CHECK: std::time::Duration = std::time::Duration::from_secs(30);

/// The client requests rmcp reads into typed forms (besides
/// `tools/call`): one of these that reaches
/// [`on_custom_request`](rmcp::ServerHandler::on_custom_request) had params
/// its form does not take, which is `-32602`, not an unknown method.
const TYPED_METHODS: &[&str] = &[
    "initialize",
    "ping",
    "server/discover",
    "completion/complete",
    "logging/setLevel",
    "prompts/get",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "resources/directory/read",
    "subscriptions/listen",
    "tools/list",
    "tasks/get",
    "tasks/update",
    "tasks/cancel",
    "skills/list",
    "skills/get",
];

fn invalid_params(message: String) -> ErrorData {
    ErrorData::invalid_params(message, None)
}

impl rmcp::ServerHandler for Handler {
    fn get_info(&self) -> ServerConfig {
        let inner = &self.server.inner;
        // A set that changes on its own (mounted servers') is announced.
        let capabilities = if inner.registry.has_groups() {
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build()
        } else {
            ServerCapabilities::builder().enable_tools().build()
        };
        let info = ServerConfig::new(capabilities)
            .with_server_info(Implementation::new(inner.name.clone(), inner.version.clone()));
        match &inner.instructions {
            Some(text) => info.with_instructions(text.clone()),
            None => info,
        }
    }

    /// Once a client is ready, it is told each time a mounted server's
    /// tools change, until its connection ends (found closed at the next
    /// change or check) or the registry is gone.
    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let registry = &self.server.inner.registry;
        if !registry.has_groups() || self.watching.swap(true, Ordering::SeqCst) {
            return;
        }
        let mut changes = registry.group_changes();
        let peer = context.peer;
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    changed = changes.changed() => {
                        if changed.is_err() || peer.notify_tool_list_changed().await.is_err() {
                            return;
                        }
                    }
                    () = tokio::time::sleep(CLOSED_CHECK) => {
                        if peer.is_transport_closed() {
                            return;
                        }
                    }
                }
            }
        });
    }

    /// From protocol 2026-07-28 on, a client hears of changes through
    /// `subscriptions/listen`: tool list changes are offered when the set
    /// can change on its own (mounted servers').
    fn accepted_subscription_filter(&self, _requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        self.server
            .inner
            .registry
            .has_groups()
            .then(|| SubscriptionFilter::builder().tools_list_changed().build())
    }

    /// One subscription: each change of a mounted server's tools is sent
    /// on it, until the client ends it or the registry is gone.
    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let Ok(_open) = self.subscriptions.try_acquire() else {
            return Err(ErrorData::invalid_request(
                format!(
                    "{MAX_SUBSCRIPTIONS} subscriptions are open on this connection, the most it may hold; end one first"
                ),
                None,
            ));
        };
        let mut changes = self.server.inner.registry.group_changes();
        loop {
            tokio::select! {
                () = context.cancelled() => return Ok(()),
                changed = changes.changed() => {
                    if changed.is_err() || context.sink().notify_tool_list_changed().await.is_err() {
                        return Ok(());
                    }
                }
            }
        }
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        // One page holds every tool, so no cursor is ever valid.
        if let Some(cursor) = request.and_then(|r| r.cursor) {
            return Err(invalid_params(format!(
                "invalid cursor `{}`: this server lists every tool in one page",
                crate::text::clip(&cursor)
            )));
        }
        let inner = &self.server.inner;
        let tools = inner.registry.definitions(Format::Mcp, &inner.selection).to_json();
        // `resultType` is required from 2026-07-28 on; rmcp drops it for
        // peers on older revisions.
        serde_json::from_value(json!({ "tools": tools, "resultType": "complete" }))
            .map_err(|e| ErrorData::internal_error(format!("a tool definition is not valid MCP: {e}"), None))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let result = self.answer_call(&request.name, arguments, context).await?;
        let result: CallToolResult = serde_json::from_value(result)
            .map_err(|e| ErrorData::internal_error(format!("the tool result is not valid MCP: {e}"), None))?;
        Ok(result.into())
    }

    /// rmcp hands over a `tools/call` whose params its typed form does not
    /// take (arguments that are no JSON object, a name that is no string)
    /// as a request of unknown method. Its arguments go to the binder as
    /// they came, which answers them as SPEC section 4 says (a string
    /// holding an object is parsed, anything else is
    /// `arguments_not_object`); params without a string `name` are invalid
    /// params. Any other method is not found.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        if request.method != "tools/call" {
            let method = crate::text::clip(&request.method);
            // A method rmcp reads comes here only when its params did not
            // fit its typed form.
            if TYPED_METHODS.contains(&request.method.as_str()) {
                return Err(invalid_params(format!("invalid params for `{method}`")));
            }
            return Err(ErrorData::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!("Method not found: {method}"),
                None,
            ));
        }
        let (name, arguments) = loose_call(request.params)?;
        // rmcp drops `resultType` from a typed result for peers on older
        // revisions; this result is not typed, so it is dropped here.
        let current = context
            .protocol_version()
            .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str());
        let mut result = self.answer_call(&name, arguments, context).await?;
        if !current && let Value::Object(result) = &mut result {
            result.remove("resultType");
        }
        Ok(CustomResult::new(result))
    }
}

impl Handler {
    /// Runs a call of `name` with `arguments` (any JSON value: the binder
    /// judges it) and answers with the `CallToolResult` as JSON; an unknown
    /// tool is invalid params.
    async fn answer_call(
        &self,
        name: &str,
        arguments: Value,
        context: RequestContext<RoleServer>,
    ) -> Result<Value, ErrorData> {
        let inner = self.server.inner.clone();
        if !inner.offered(name) {
            return Err(invalid_params(format!("Unknown tool: {}", crate::text::clip(name))));
        }
        let call = ToolCall::new(name.to_owned(), CallArguments::Json(arguments)).with_id(context.id.to_string());
        let cancel = Cancellation::new();
        let running = inner.call(call, cancel.clone());
        tokio::pin!(running);
        let result = tokio::select! {
            result = &mut running => result,
            () = context.ct.cancelled() => {
                cancel.cancel();
                // A tool that heeds its cancellation ends within the grace;
                // one that never yields is given up, as at its time limit:
                // its places (in flight, running) are freed at once, its
                // thread counted as a stray until it ends. No one reads
                // the answer of a cancelled request.
                match tokio::time::timeout(CANCEL_GRACE, running).await {
                    Ok(result) => result,
                    Err(_) => ToolResult::failure(name, None, Outcome::Cancelled, "The call was cancelled.".into()),
                }
            }
        };
        let mut result = mcp::reply(&result);
        result["resultType"] = Value::from("complete");
        Ok(result)
    }
}

/// The tool's name and the arguments, as sent, of `tools/call` params that
/// rmcp's typed form did not take. Absent arguments are `{}`.
fn loose_call(params: Option<Value>) -> Result<(String, Value), ErrorData> {
    let Some(Value::Object(mut params)) = params else {
        return Err(invalid_params(
            "`tools/call` needs params, an object with the tool's `name`".into(),
        ));
    };
    let name = match params.remove("name") {
        Some(Value::String(name)) => name,
        Some(_) => return Err(invalid_params("the `name` of a `tools/call` must be a string".into())),
        None => return Err(invalid_params("a `tools/call` needs the `name` of the tool".into())),
    };
    let arguments = params.remove("arguments").unwrap_or_else(|| Value::Object(Map::new()));
    Ok((name, arguments))
}
