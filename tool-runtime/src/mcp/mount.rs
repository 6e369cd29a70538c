//! Mounting other MCP servers' tools into a registry: one connection per
//! server, reconnected when it drops, and a [`Tool`] per remote tool that
//! binds arguments by the remote schema and forwards the call.
//!
//! Each server's tools are one replaceable group of the registry. When the
//! server announces `notifications/tools/list_changed` (or comes back after
//! a reconnect), a background task lists its tools again and replaces the
//! group as a whole: the registry's next listing and next call see the new
//! set, with nothing for the application to do. That task only lists on a
//! live connection; starting or reaching a server again is left to a call.
//!
//! Answers are read as JSON, as leniently as a native tool's output: one
//! tool or one content block that rmcp's types refuse (a schema of `true`,
//! a block of a later revision) does not fail the listing or the call.

use std::collections::{BTreeMap, HashMap};
use std::hash::BuildHasher as _;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, Weak};
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotification, CancelledNotificationParam, ClientConfig,
    ClientNotification, ClientRequest, Implementation, ListToolsRequest, PaginatedRequestParams, RequestId,
};
use rmcp::service::{NotificationContext, PeerRequestOptions, RoleClient, RunningService, ServiceError};
use rmcp::{ClientHandler, Peer, ServiceExt as _};
use serde_json::{Map, Value};
use tokio::sync::Mutex;

use super::McpError;
use super::config::{McpConfig, ServerEntry, local_keys};
use crate::bind::BoundArguments;
use crate::codes::CallError;
use crate::context::CallScope;
use crate::output::{Content, ToolOutput};
use crate::registry::{ToolGroup, ToolRegistry};
use crate::schema::{LocalKeys, cut_description, import_input_schema_with_local_keys};
use crate::tool::{Tool, ToolAnnotations, ToolDefinition, ToolFuture, is_valid_property_name};

/// How long closing one server's connection may take (a stdio server is
/// given time to exit, then `SIGTERM`, then killed).
const CLOSE_TIMEOUT: Duration = Duration::from_secs(10);

/// The most pages of `tools/list` read from one server.
const MAX_LIST_PAGES: usize = 100;

/// The longest next-page cursor of `tools/list` followed; a longer one
/// ends the listing with an error.
const MAX_CURSOR_BYTES: usize = 4 << 10;

/// The least time from the end of one listing of a server's tools to the
/// start of the next, so that a server that announces a change while (or
/// whenever) it is listed is not listed back to back.
const MIN_RELIST_INTERVAL: Duration = Duration::from_secs(1);

/// The most tools mounted from one server; the first ones listed are kept.
/// Every tool offered is sent to the model with each request.
const MAX_SERVER_TOOLS: usize = 1000;

/// The largest tool mounted, as the server listed it in JSON (its
/// description and schemas); a larger one is left out before it is read.
const MAX_TOOL_BYTES: usize = 256 << 10;

/// The most bytes of definitions one server's tools may add up to (1 MiB):
/// each tool's description and its schemas as the registry sends them on.
/// Every tool offered is sent to the model with each request; 1,000 tools
/// of 256 KiB each would be far more than any model reads. The first tools
/// listed are kept, up to the first one that does not fit; it and every
/// later one are left out.
const MAX_SERVER_BYTES: usize = 1 << 20;

/// The servers mounted into a registry, for [`McpMounts::servers`], and
/// those that could not be, for [`McpMounts::failures`]. The connections
/// and the refreshing of each server's tools live on in the registry:
/// dropping this changes nothing; [`McpMounts::close`] ends them.
#[derive(Debug)]
pub struct McpMounts {
    servers: Vec<Arc<Connection>>,
    failures: Vec<MountFailure>,
}

/// One mounted server's tools, as reported by [`McpMounts::servers`].
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct MountedServer {
    /// The server's name in the configuration.
    pub name: String,
    /// The registry names of its tools now, in name order.
    pub tools: Vec<String>,
    /// The protocol revision agreed with it, when connected.
    pub protocol_version: Option<String>,
}

/// A server of the configuration that could not be mounted, as reported by
/// [`McpMounts::failures`]; none of its tools is in the registry.
#[derive(Debug)]
#[non_exhaustive]
pub struct MountFailure {
    /// The server's name in the configuration.
    pub name: String,
    /// Why it could not be mounted (it names the server).
    pub error: McpError,
}

impl McpMounts {
    /// Connects to every server of `config` (in name order) and adds its
    /// tools to `registry` under their prefixed names.
    ///
    /// A server that cannot be mounted (it cannot be started, reached or
    /// listed, or one of its tools' prefixed names is taken by a tool the
    /// registry has already) is left out, with a `warn` event, and the
    /// others are mounted all the same: read [`McpMounts::failures`] to
    /// know. Fails only when no server could be mounted at all (and the
    /// configuration names one), with an error that names each.
    ///
    /// Of a mounted server, a tool is left out, with a `warn` event, when
    /// it cannot be read (it has no name), it is larger than 256 KiB as
    /// JSON, it runs only as a task, an object inside one of its parameters
    /// has a property key no provider accepts (see below), or its prefixed
    /// name is one an earlier tool of its list has (it is listed twice:
    /// names made alike only by the clean-up to provider characters,
    /// `read.file` beside `read_file`, are told apart by a hash); a
    /// server's tools past its first 1,000 are left out, and no later page
    /// of its list is read. A description (the tool's, or one in its
    /// schema) longer than 4 KiB is cut, with a marker; the tools of one
    /// server add up to at most 1 MiB of descriptions and schemas, and the
    /// tools listed past that are left out, with one `warn` event that says
    /// how many. The other tools mount.
    ///
    /// A parameter whose key a provider would refuse (Anthropic takes
    /// `^[a-zA-Z0-9_.-]{1,64}$`; `$filter`, `file path` and `größe` are
    /// not) gets a local key made as tool names are (`_filter`,
    /// `file_path`, with a hash where that makes two alike), and its
    /// description says the server's key; a call's arguments reach the
    /// server under the server's keys.
    ///
    /// From then on each server's set follows the server: after it sends
    /// `notifications/tools/list_changed`, its tools are listed again in the
    /// background (a second at the earliest after its last listing) and the
    /// registry's listings and calls use the new set (a tool it dropped
    /// becomes `unknown_tool`); a listing that finds the same tools changes
    /// nothing. That listing is made only
    /// while the server is connected: a server that exited or dropped the
    /// connection is started or reached again by the next call of one of
    /// its tools, which has its tools listed again. A name belongs to the
    /// registered tool that has it, else to the server mounted first that
    /// lists it, after a refresh too: another tool of that name is left out
    /// with a `warn` event.
    /// Needs a Tokio runtime that stays running while the registry is used.
    pub async fn mount(registry: &mut ToolRegistry, config: McpConfig) -> Result<McpMounts, McpError> {
        let config = Arc::new(config);
        let mut mounts = McpMounts {
            servers: Vec::new(),
            failures: Vec::new(),
        };
        for (name, entry) in config.servers() {
            match mount_server(registry, name, entry, &config).await {
                Ok(connection) => mounts.servers.push(connection),
                Err(error) => {
                    tracing::warn!(server = %name, %error, "an MCP server could not be mounted; it is left out");
                    mounts.failures.push(MountFailure {
                        name: name.to_owned(),
                        error,
                    });
                }
            }
        }
        if mounts.servers.is_empty() && !mounts.failures.is_empty() {
            return Err(none_mounted(mounts.failures));
        }
        Ok(mounts)
    }

    /// Ends the connection to every mounted server, as the MCP
    /// specification's shutdown goes: a stdio server's input is closed and
    /// it is given time to exit (then `SIGTERM`, then it is killed); an HTTP
    /// session is ended. Each server is given at most 10 seconds, once a
    /// connection being made when `close` is called is made. The tools
    /// stay in the registry, and a call of one is then an error saying its
    /// server was closed; no server is started or connected again.
    ///
    /// Without it, the servers run until the registry is dropped, and a
    /// stdio server is then killed.
    pub async fn close(&self) {
        futures_util::future::join_all(self.servers.iter().map(|connection| connection.close())).await;
    }

    /// The servers of the configuration that could not be mounted, in name
    /// order, each with its error; empty when every server was mounted.
    pub fn failures(&self) -> &[MountFailure] {
        &self.failures
    }

    /// What is mounted, server by server, with each server's current tools.
    pub fn servers(&self) -> Vec<MountedServer> {
        self.servers
            .iter()
            .map(|c| {
                let mut tools: Vec<String> = match c.group.get().and_then(Weak::upgrade) {
                    Some(group) => group
                        .snapshot()
                        .tools()
                        .map(|t| t.definition().name().to_owned())
                        .collect(),
                    None => Vec::new(),
                };
                tools.sort_unstable();
                MountedServer {
                    name: c.name.clone(),
                    tools,
                    protocol_version: c.lock_version().clone(),
                }
            })
            .collect()
    }
}

/// Connects to one server and adds its tools to `registry` as one group.
async fn mount_server(
    registry: &mut ToolRegistry,
    name: &str,
    entry: &ServerEntry,
    config: &Arc<McpConfig>,
) -> Result<Arc<Connection>, McpError> {
    let connection = Arc::new_cyclic(|me| Connection::new(name.to_owned(), entry.clone(), config.clone(), me.clone()));
    let peer = connection.peer().await?;
    let mut listing = connection.listing.lock().await;
    let listed = connection.list(&peer).await;
    listing.ended = Some(tokio::time::Instant::now());
    let listed = listed?;
    let tools = connection.tools_of(&listed, &mut listing.names)?;
    listing.tools = listed;
    drop(listing);
    let (tools, problems) = ToolGroup::check(tools);
    for problem in &problems {
        tracing::warn!(server = %name, %problem, "a tool the MCP server listed is left out");
    }
    let group = ToolGroup::new(tools, connection.clone());
    registry
        .add_group(group.clone())
        .map_err(|e| McpError::config(format!("server `{name}`: {e}")))?;
    let _ = connection.group.set(Arc::downgrade(&group));
    // A change announced while the first list was being made.
    if connection.changed.load(Ordering::SeqCst) {
        connection.tools_changed();
    }
    Ok(connection)
}

/// The error of a mount where no server could be mounted: the one
/// server's own, or one that names each.
fn none_mounted(mut failures: Vec<MountFailure>) -> McpError {
    if failures.len() == 1 {
        return failures.remove(0).error;
    }
    let each: Vec<String> = failures.iter().map(|f| f.error.to_string()).collect();
    let first = failures.remove(0).error;
    McpError {
        kind: first.kind(),
        message: format!("no MCP server could be mounted: {}", each.join("; ")),
        source: Some(Box::new(first)),
    }
}

/// The connection to one server: made on mount, remade on the first call
/// after it dropped.
pub(crate) struct Connection {
    name: String,
    entry: ServerEntry,
    /// Names the server's tools in the registry.
    naming: Arc<McpConfig>,
    /// Itself, for the tasks it starts and the tools it makes.
    me: Weak<Connection>,
    client: Mutex<Option<RunningService<RoleClient, Listener>>>,
    /// The server announced a change its tools were not listed again for.
    changed: AtomicBool,
    /// A listing task is queued and has not begun: a change announced now
    /// is seen by it, so however fast a server announces changes, at most
    /// one task waits.
    scheduled: AtomicBool,
    /// A connection was made before (the next one is a reconnect).
    connected: AtomicBool,
    /// The last listing; held while the tools are listed again, so lists
    /// are replaced in the order they were made.
    listing: Mutex<Listing>,
    /// The registry's group of its tools (weak: the group holds the
    /// connection).
    group: OnceLock<Weak<ToolGroup>>,
    /// The protocol revision of the current connection.
    version: std::sync::Mutex<Option<String>>,
    /// [`McpMounts::close`] ended it: no connection is made again.
    closed: AtomicBool,
    /// Counts the connections made, so a call that failed on one replaces
    /// only that one, never the next another call made meanwhile.
    generation: AtomicU64,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("name", &self.name)
            .field("entry", &self.entry)
            .finish()
    }
}

/// The last listing of a server's tools.
#[derive(Default)]
struct Listing {
    /// The tools the group was made of, as the server listed them.
    tools: Vec<Value>,
    /// The registry names of the tools listed last, by remote name: a tool
    /// listed again keeps its name.
    names: HashMap<String, String>,
    /// When the last listing ended (or failed).
    ended: Option<tokio::time::Instant>,
}

/// Our side of a connection: it answers `tools/list_changed`.
#[derive(Clone)]
struct Listener {
    connection: Weak<Connection>,
}

impl ClientHandler for Listener {
    fn get_info(&self) -> ClientConfig {
        let mut info = ClientConfig::default();
        info.client_info = Implementation::new(env!("CARGO_PKG_NAME"), env!("CARGO_PKG_VERSION"));
        info
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        if let Some(connection) = self.connection.upgrade() {
            connection.tools_changed();
        }
    }
}

impl Connection {
    fn new(name: String, entry: ServerEntry, naming: Arc<McpConfig>, me: Weak<Connection>) -> Self {
        Connection {
            name,
            entry,
            naming,
            me,
            client: Mutex::new(None),
            changed: AtomicBool::new(false),
            scheduled: AtomicBool::new(false),
            connected: AtomicBool::new(false),
            listing: Mutex::new(Listing::default()),
            group: OnceLock::new(),
            version: std::sync::Mutex::default(),
            generation: AtomicU64::new(0),
            closed: AtomicBool::new(false),
        }
    }

    /// Ends the connection for good.
    async fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        let running = self.client.lock().await.take();
        if let Some(mut running) = running
            && running.close_with_timeout(CLOSE_TIMEOUT).await.ok().flatten().is_none()
        {
            tracing::warn!(server = %self.name, "the MCP server's connection did not close in time");
        }
    }

    fn lock_version(&self) -> std::sync::MutexGuard<'_, Option<String>> {
        self.version.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Notes that the server's tools changed and lists them again in the
    /// background.
    fn tools_changed(&self) {
        self.changed.store(true, Ordering::SeqCst);
        if self.scheduled.swap(true, Ordering::SeqCst) {
            return;
        }
        match (self.me.upgrade(), tokio::runtime::Handle::try_current()) {
            (Some(connection), Ok(runtime)) => {
                runtime.spawn(async move { connection.refresh().await });
            }
            // Nothing queued after all: the next change tries again.
            _ => self.scheduled.store(false, Ordering::SeqCst),
        }
    }

    /// Lists the tools again, if a change is pending, and replaces the
    /// group with them when they changed. On failure the group keeps its
    /// set; the next change or reconnect tries again.
    ///
    /// Not before [`MIN_RELIST_INTERVAL`] has passed since the last listing
    /// ended: the changes announced meanwhile are seen by this listing.
    ///
    /// Only on a live connection: a server that exited or hung up is not
    /// started or reached again here (one that fails at every listing
    /// would be restarted for ever), but by the next call, whose reconnect
    /// asks for another listing.
    async fn refresh(self: Arc<Self>) {
        let mut listing = self.listing.lock().await;
        if let Some(ended) = listing.ended {
            tokio::time::sleep_until(ended + MIN_RELIST_INTERVAL).await;
        }
        // From here a new change queues another listing.
        self.scheduled.store(false, Ordering::SeqCst);
        // Not mounted yet (the mount looks at the flag once it is), or the
        // registry is gone.
        let Some(group) = self.group.get().and_then(Weak::upgrade) else {
            return;
        };
        if !self.changed.swap(false, Ordering::SeqCst) {
            return;
        }
        let Some(peer) = self.live_peer().await else {
            tracing::debug!(server = %self.name, "the MCP server is not connected; its tools are listed again once a call reconnects it");
            return;
        };
        let listed = self.list(&peer).await;
        listing.ended = Some(tokio::time::Instant::now());
        let listed = match listed {
            // Nothing to replace, nor to tell the registry's clients.
            Ok(listed) if listed == listing.tools => {
                tracing::debug!(server = %self.name, "the MCP server's tools were listed again, unchanged");
                return;
            }
            Ok(listed) => listed,
            Err(error) => {
                tracing::warn!(server = %self.name, %error, "listing the MCP server's tools again failed; its previous set stays");
                return;
            }
        };
        let Ok(tools) = self.tools_of(&listed, &mut listing.names) else {
            return;
        };
        let (tools, problems) = ToolGroup::check(tools);
        for problem in &problems {
            tracing::warn!(server = %self.name, %problem, "a tool the MCP server listed is left out");
        }
        tracing::debug!(server = %self.name, tools = tools.len(), "the MCP server's tools were listed again");
        group.replace(tools);
        listing.tools = listed;
    }

    /// The server's tools that are mounted, as it listed them on `peer`
    /// (`Tool`s of `tools/list`, as JSON): page by page, each tool read on
    /// its own, until the last page or until [`MAX_SERVER_TOOLS`] are kept;
    /// within the connection's time limit and at most [`MAX_LIST_PAGES`]
    /// pages, so that a server that never answers, or always names a next
    /// page, cannot hold the mounting (or a refresh) up for ever.
    async fn list(&self, peer: &Peer<RoleClient>) -> Result<Vec<Value>, McpError> {
        let context = format!("server `{}`: tools/list", self.name);
        let all = async {
            let mut tools: Vec<Value> = Vec::new();
            let mut cursor = None;
            // The cursors seen, by hash.
            let hasher = std::collections::hash_map::RandomState::new();
            let mut cursors = std::collections::HashSet::new();
            for _ in 0..MAX_LIST_PAGES {
                let params = PaginatedRequestParams::default().with_cursor(cursor);
                let request = ClientRequest::ListToolsRequest(ListToolsRequest::with_param(params));
                let page = request_json(peer, request)
                    .await
                    .map_err(|e| McpError::protocol(e).prefixed(&context))?;
                if let Some(kind) = unfinished(&page) {
                    return Err(McpError::peer(format!(
                        "{context}: an answer of type `{}`, not a list",
                        crate::text::clip(kind)
                    )));
                }
                let Some(listed) = page.get("tools").and_then(Value::as_array) else {
                    return Err(McpError::peer(format!("{context}: the answer has no list of tools")));
                };
                // An empty cursor is none (some servers send `""` on the last
                // page); one the server sent before would list a page again.
                let next = page.get("nextCursor").and_then(Value::as_str).filter(|c| !c.is_empty());
                if let Some(next) = next {
                    if next.len() > MAX_CURSOR_BYTES {
                        return Err(McpError::peer(format!(
                            "{context}: a next-page cursor longer than {MAX_CURSOR_BYTES} bytes"
                        )));
                    }
                    if !cursors.insert(hasher.hash_one(next)) {
                        return Err(McpError::peer(format!(
                            "{context}: the cursor of an earlier page was sent again"
                        )));
                    }
                }
                cursor = next.map(str::to_owned);
                let (mut unreadable, mut over) = (0, 0);
                for info in listed {
                    if tools.len() == MAX_SERVER_TOOLS {
                        over += usize::from(self.allowed(info));
                        continue;
                    }
                    match self.keeps(info) {
                        Ok(true) => tools.push(info.clone()),
                        Ok(false) => {}
                        Err(()) => unreadable += 1,
                    }
                }
                if unreadable > 0 {
                    tracing::warn!(server = %self.name, unreadable, "tools the MCP server listed have no name; they are left out");
                }
                let capped = tools.len() == MAX_SERVER_TOOLS;
                if capped && (over > 0 || cursor.is_some()) {
                    tracing::warn!(server = %self.name, left_out = over, later_pages_unread = cursor.is_some(), "an MCP server offers more than {MAX_SERVER_TOOLS} tools; the first ones listed are kept, and no later page of its list is read");
                }
                if capped || cursor.is_none() {
                    return Ok(tools);
                }
            }
            Err(McpError::peer(format!(
                "{context}: still a next page after {MAX_LIST_PAGES} pages"
            )))
        };
        let limit = self.naming.connect_timeout;
        tokio::time::timeout(limit, all).await.unwrap_or_else(|_| {
            Err(McpError::peer(format!(
                "{context}: no complete answer within {} s",
                limit.as_secs_f64()
            )))
        })
    }

    /// The tools `listed` (by [`list`](Self::list)) as the registry holds
    /// them, named as `names` (the names given at the last listing) says
    /// for a tool listed before; `names` then holds this listing's. A tool
    /// with a property key no provider accepts inside a parameter is left
    /// out, and so are the tools past [`MAX_SERVER_BYTES`].
    fn tools_of(&self, listed: &[Value], names: &mut HashMap<String, String>) -> Result<Vec<Arc<dyn Tool>>, McpError> {
        let Some(me) = self.me.upgrade() else {
            return Err(McpError::config(format!("server `{}`: no longer mounted", self.name)));
        };
        // Named together, so names made alike by clean-up stay apart.
        let remote: Vec<&str> = listed.iter().map(|info| tool_name(info).unwrap_or_default()).collect();
        let locals = self.naming.local_names(&self.name, &remote, names);
        *names = remote
            .iter()
            .map(|name| (*name).to_owned())
            .zip(locals.iter().cloned())
            .collect();
        let mut tools: Vec<Arc<dyn Tool>> = Vec::with_capacity(listed.len());
        let (mut bytes_left, mut over_budget) = (MAX_SERVER_BYTES, 0);
        for ((info, name), local) in listed.iter().zip(&remote).zip(locals) {
            let tool = match RemoteTool::new(local, info, me.clone()) {
                Ok(tool) => tool,
                Err(key) => {
                    tracing::warn!(server = %self.name, tool = %crate::text::clip(name), key = %crate::text::clip(&key), "an MCP tool with a property key no provider accepts (1 to 64 ASCII letters, digits, `_`, `.` or `-`) where no local key can stand for it (in a member of a union) is left out");
                    continue;
                }
            };
            let size = tool.definition_size();
            if over_budget > 0 || size > bytes_left {
                over_budget += 1;
                continue;
            }
            bytes_left -= size;
            tools.push(Arc::new(tool));
        }
        if over_budget > 0 {
            tracing::warn!(server = %self.name, left_out = over_budget, "an MCP server's tools add up to more than {MAX_SERVER_BYTES} bytes of descriptions and schemas; the first ones listed are kept");
        }
        Ok(tools)
    }

    /// Whether the tool `info` (a `Tool` of `tools/list`, as JSON) is
    /// mounted: not when it is left out (not allowed, too large, or run
    /// only as a task); `Err` when it is no tool (no name).
    fn keeps(&self, info: &Value) -> Result<bool, ()> {
        let name = tool_name(info).ok_or(())?;
        if !self.naming.allows(&self.name, name) {
            return Ok(false);
        }
        let size = serde_json::to_vec(info).map_or(usize::MAX, |bytes| bytes.len());
        if size > MAX_TOOL_BYTES {
            tracing::warn!(server = %self.name, tool = %crate::text::clip(name), size, "an MCP tool larger than {MAX_TOOL_BYTES} bytes is left out");
            return Ok(false);
        }
        // A tool that can only run as a task cannot be called here. (A list
        // rmcp's types take comes back through its `Tool`, which has no
        // `execution`: the key is seen in a list it could not type.)
        if info["execution"]["taskSupport"] == "required" {
            tracing::warn!(server = %self.name, tool = %crate::text::clip(name), "an MCP tool that runs only as a task is left out");
            return Ok(false);
        }
        Ok(true)
    }

    /// Whether the configuration mounts the tool `info`, if it is one.
    fn allowed(&self, info: &Value) -> bool {
        tool_name(info).is_some_and(|name| self.naming.allows(&self.name, name))
    }

    /// The current peer if its connection is live; never a new connection.
    async fn live_peer(&self) -> Option<Peer<RoleClient>> {
        let client = self.client.lock().await;
        client
            .as_ref()
            .filter(|running| !running.is_transport_closed())
            .map(|running| running.peer().clone())
    }

    /// A live peer: the current one, or a new connection when there is none
    /// or it closed.
    async fn peer(&self) -> Result<Peer<RoleClient>, McpError> {
        self.numbered_peer().await.map(|(peer, _)| peer)
    }

    /// [`peer`](Self::peer), with the number of its connection.
    async fn numbered_peer(&self) -> Result<(Peer<RoleClient>, u64), McpError> {
        let mut client = self.client.lock().await;
        if self.closed.load(Ordering::SeqCst) {
            return Err(McpError::config(format!("server `{}` was closed", self.name)));
        }
        if let Some(running) = client.as_ref()
            && !running.is_transport_closed()
        {
            return Ok((running.peer().clone(), self.generation.load(Ordering::SeqCst)));
        }
        *client = None;
        let limit = self.naming.connect_timeout;
        let running = tokio::time::timeout(limit, self.connect()).await.map_err(|_| {
            McpError::config(format!(
                "server `{}`: no answer to the handshake within {} s",
                self.name,
                limit.as_secs_f64()
            ))
        })??;
        let peer = running.peer().clone();
        *self.lock_version() = peer.peer_info().map(|info| info.protocol_version.to_string());
        let reconnected = self.connected.swap(true, Ordering::SeqCst);
        *client = Some(running);
        let generation = self.generation.fetch_add(1, Ordering::SeqCst) + 1;
        // A restarted server may offer other tools.
        if reconnected {
            self.tools_changed();
        }
        Ok((peer, generation))
    }

    async fn connect(&self) -> Result<RunningService<RoleClient, Listener>, McpError> {
        let listener = Listener {
            connection: self.me.clone(),
        };
        let name = &self.name;
        match &self.entry {
            ServerEntry::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                let mut cmd = tokio::process::Command::new(command);
                // rmcp kills a child it drops from a task it spawns, which
                // never runs once the runtime shuts down: the child is then
                // killed as it is dropped. (Only the child: what is left of
                // its process group is `ServerProcess`'s to end.)
                cmd.args(args).envs(env).kill_on_drop(true);
                // A group of its own: a Ctrl-C at the terminal signals the
                // terminal's foreground group, this program's, and must not
                // stop the servers too.
                #[cfg(unix)]
                cmd.process_group(0);
                if let Some(cwd) = cwd {
                    cmd.current_dir(cwd);
                }
                let (child, _) = rmcp::transport::TokioChildProcess::builder(cmd)
                    .stderr(std::process::Stdio::inherit())
                    .spawn()
                    .map_err(|e| McpError::config(format!("server `{name}`: cannot start `{command}`: {e}")))?;
                listener
                    .serve(ServerProcess::new(child))
                    .await
                    .map_err(|e| McpError::protocol(e).prefixed(&format!("server `{name}`")))
            }
            ServerEntry::Http { url, headers } => self.connect_http(listener, url, headers).await,
            ServerEntry::Sse { url, headers } => self.connect_sse(listener, url, headers).await,
            ServerEntry::Url { url, headers } => {
                // Streamable HTTP first; a server of the older revision
                // refuses its POST, and is then reached over SSE.
                let streamable = match self.connect_http(listener.clone(), url, headers).await {
                    Ok(running) => return Ok(running),
                    Err(error) => error,
                };
                tracing::debug!(server = %name, error = %streamable, "no streamable HTTP; trying the legacy SSE transport");
                let failed = format!("no streamable HTTP ({streamable}), and then");
                self.connect_sse(listener, url, headers)
                    .await
                    .map_err(|sse| sse.prefixed(&failed))
            }
        }
    }

    async fn connect_http(
        &self,
        listener: Listener,
        url: &str,
        headers: &BTreeMap<String, String>,
    ) -> Result<RunningService<RoleClient, Listener>, McpError> {
        use rmcp::transport::StreamableHttpClientTransport;
        use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
        let name = &self.name;
        let mut custom = HashMap::new();
        let mut bearer = None;
        for (key, value) in headers {
            // rmcp sends a bearer token itself (and after a redirect); the
            // scheme's name is case-insensitive.
            if key.eq_ignore_ascii_case("authorization")
                && let Some(token) = super::http::bearer_credentials(value.as_bytes())
            {
                bearer = Some(String::from_utf8_lossy(token).into_owned());
                continue;
            }
            let (key, value) = header(name, key, value)?;
            custom.insert(key, value);
        }
        // A session the server no longer knows (it restarted) fails the
        // call, rather than being opened again unseen: the connection is
        // then replaced here, and the restarted server's tools listed again.
        let mut config = StreamableHttpClientTransportConfig::with_uri(url)
            .custom_headers(custom)
            .reinit_on_expired_session(false);
        if let Some(token) = bearer {
            config = config.auth_header(token);
        }
        let transport = StreamableHttpClientTransport::with_client(http_client(name, url)?, config);
        listener
            .serve(transport)
            .await
            .map_err(|e| McpError::protocol(e).prefixed(&format!("server `{name}` ({url})")))
    }

    async fn connect_sse(
        &self,
        listener: Listener,
        url: &str,
        headers: &BTreeMap<String, String>,
    ) -> Result<RunningService<RoleClient, Listener>, McpError> {
        let name = &self.name;
        let context = format!("server `{name}` (legacy SSE transport, {url})");
        let headers = headers
            .iter()
            .map(|(key, value)| header(name, key, value))
            .collect::<Result<_, _>>()?;
        let transport = super::sse::SseTransport::connect(http_client(name, url)?, url, headers)
            .await
            .map_err(|e| e.prefixed(&context))?;
        listener
            .serve(transport)
            .await
            .map_err(|e| McpError::protocol(e).prefixed(&context))
    }

    /// Forwards one call; every failure is an error output naming the
    /// server. A connection found dead is reported, not silently replaced:
    /// the call fails with the news, and the server is reconnected for the
    /// next one.
    async fn call(&self, tool: &str, arguments: Map<String, Value>) -> ToolOutput {
        if self.closed.load(Ordering::SeqCst) {
            return ToolOutput::error(format!(
                "The MCP server `{}` was closed; its tools cannot be called.",
                self.name
            ));
        }
        if self.drop_if_closed().await {
            return self
                .reconnected("exited or dropped the connection since the last call", false)
                .await;
        }
        let (peer, generation) = match self.numbered_peer().await {
            Ok(numbered) => numbered,
            Err(e) => return ToolOutput::error(format!("The MCP server `{}` is not reachable: {e}", self.name)),
        };
        let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        match request_json(&peer, request).await {
            Ok(result) if !result.is_object() => ToolOutput::error(format!(
                "The MCP server `{}` answered the call of `{tool}` with a result that cannot be read (no object). \
                 The tool may have run.",
                self.name
            )),
            Ok(result) => match unfinished(&result) {
                Some(kind) => ToolOutput::error(format!(
                    "The MCP server `{}` answered the call of `{tool}` with a result of type `{}`, which this \
                     client does not follow. The tool may have run.",
                    self.name,
                    crate::text::clip(kind)
                )),
                None => output_of(&result),
            },
            // Refused before the tool ran: the call can be corrected and made again.
            Err(ServiceError::McpError(e)) if refused_unread(e.code.0) => ToolOutput::error(format!(
                "The MCP server `{}` refused the call of `{tool}`: {} (code {})",
                self.name, e.message, e.code.0
            )),
            // Any other (older SDKs send -32603 for an exception the tool
            // raised) may come after the tool did part of its work.
            Err(ServiceError::McpError(e)) => ToolOutput::error(format!(
                "The call of `{tool}` on the MCP server `{}` failed: {} (code {}). The tool may have run.",
                self.name, e.message, e.code.0
            )),
            Err(e) => {
                // A connection is replaced only when it is closed, or when
                // its server is gone or its session over. One still open
                // belongs to a live server (one whose answer rmcp could not
                // read, say, after the tool ran; one behind a proxy that
                // failed this request alone), which other calls may be
                // using, or is the new connection another call made after
                // the same failure: dropping it would stop a healthy server
                // and lose their answers.
                let lost = match self.entry {
                    // A stdio server's end is the connection's, which
                    // `drop_if_closed` sees.
                    ServerEntry::Stdio { .. } => None,
                    _ => lost(&e),
                };
                if self.drop_if_closed().await {
                    // It may have done the work before it died.
                    self.reconnected(&format!("failed during the call of `{tool}` ({e})"), true)
                        .await
                } else if let Some(lost) = lost {
                    self.drop_connection(generation).await;
                    match lost {
                        // Refused unread, or never sent: the tool did not run.
                        Lost::Unsent(what) => self.reconnected(what, false).await,
                        Lost::Broken => {
                            self.reconnected(
                                &format!("dropped the connection during the call of `{tool}` ({e})"),
                                true,
                            )
                            .await
                        }
                    }
                } else {
                    ToolOutput::error(format!(
                        "The call of `{tool}` on the MCP server `{}` failed: {}. The tool may have run.",
                        self.name,
                        crate::text::clip_at(&e.to_string(), super::MAX_ERROR_CHARS)
                    ))
                }
            }
        }
    }

    /// Drops the connection when it is closed (the server exited or hung
    /// up); whether it was.
    async fn drop_if_closed(&self) -> bool {
        let mut client = self.client.lock().await;
        let closed = client.as_ref().is_some_and(|running| running.is_transport_closed());
        if closed {
            client.take();
        }
        closed
    }

    /// Drops connection number `generation`, whose server a call found gone
    /// (over HTTP a connection stays open when its server is gone, each
    /// request being an exchange of its own), unless another call has
    /// replaced it already.
    async fn drop_connection(&self, generation: u64) {
        let mut client = self.client.lock().await;
        if self.generation.load(Ordering::SeqCst) == generation {
            client.take();
        }
    }

    /// The error result of a call that found the server gone, after one
    /// attempt to reconnect; `sent` when the call had reached the server,
    /// which may then have done its work.
    async fn reconnected(&self, what: &str, sent: bool) -> ToolOutput {
        let reconnected = self.peer().await;
        let status = match (&reconnected, sent) {
            (Ok(_), false) => "it has been reconnected, so the call can be made again".to_owned(),
            (Ok(_), true) => "it has been reconnected".to_owned(),
            (Err(e), _) => format!("reconnecting failed too ({e}); the next call tries again"),
        };
        let after = if sent {
            " The tool may have run: check before calling it again."
        } else {
            ""
        };
        ToolOutput::error(format!("The MCP server `{}` {what}; {status}.{after}", self.name))
    }
}

/// A stdio server's transport: rmcp's child process, which on Unix leads
/// a process group of its own (see `connect`), with what the server
/// starts in turn (`npx` starts `node`, `sh -c` its command). When the
/// transport is dropped, after rmcp closed it (the server's input closed,
/// then `SIGTERM`, then `SIGKILL`, to the server alone) or without (the
/// runtime shut down), whatever is left of the group is killed: a
/// process the server started never outlives the connection.
struct ServerProcess {
    child: rmcp::transport::TokioChildProcess,
    /// The id of its process group: the server's own process id.
    group: Option<u32>,
}

impl ServerProcess {
    fn new(child: rmcp::transport::TokioChildProcess) -> Self {
        let group = if cfg!(unix) { child.id() } else { None };
        ServerProcess { child, group }
    }
}

impl rmcp::transport::Transport<RoleClient> for ServerProcess {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: rmcp::service::TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), std::io::Error>> + Send + 'static {
        self.child.send(item)
    }

    fn receive(&mut self) -> impl Future<Output = Option<rmcp::service::RxJsonRpcMessage<RoleClient>>> + Send {
        self.child.receive()
    }

    fn close(&mut self) -> impl Future<Output = Result<(), std::io::Error>> + Send {
        self.child.close()
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        if let Some(group) = self.group {
            kill_group(group);
        }
    }
}

/// Sends `SIGKILL` to every process of process group `group`. A group
/// whose processes have all ended is no error (none is found); its id,
/// freed just now, is not handed out again before process ids wrap around.
#[cfg(unix)]
fn kill_group(group: u32) {
    use nix::sys::signal::{Signal, killpg};
    use nix::unistd::Pid;
    let Ok(group) = i32::try_from(group) else { return };
    if let Err(error) = killpg(Pid::from_raw(group), Signal::SIGKILL)
        && error != nix::errno::Errno::ESRCH
    {
        tracing::debug!(group, %error, "the process group of an MCP server could not be killed");
    }
}

/// Nothing to do: no process groups here.
#[cfg(not(unix))]
fn kill_group(_group: u32) {}

/// Sends `request` on `peer` and returns its result as JSON: as the server
/// wrote it when rmcp's types refuse it (a tool or a content block of a
/// shape they do not know), else as rmcp read it. Dropping the future
/// before the answer came (a time-out, a cancellation) sends the server
/// `notifications/cancelled`, as rmcp's own requests do.
async fn request_json(peer: &Peer<RoleClient>, request: ClientRequest) -> Result<Value, ServiceError> {
    let handle = peer
        .send_request_with_option(request, PeerRequestOptions::no_options())
        .await?;
    let mut abandoned = CancelOnDrop {
        peer: peer.clone(),
        id: Some(handle.id.clone()),
    };
    let answer = handle.await_response().await;
    abandoned.id = None;
    // Untagged: a variant is written as its own JSON, `CustomResult` as
    // the value it holds.
    serde_json::to_value(answer?).map_err(|_| ServiceError::UnexpectedResponse)
}

/// Sends the server `notifications/cancelled` for request `id` when dropped
/// before `id` is cleared.
struct CancelOnDrop {
    peer: Peer<RoleClient>,
    id: Option<RequestId>,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let peer = self.peer.clone();
        let reason = Some("the request was abandoned by the caller".to_owned());
        let notification = CancelledNotification::new(CancelledNotificationParam::new(Some(id), reason));
        runtime.spawn(async move {
            let _ = peer
                .send_notification(ClientNotification::CancelledNotification(notification))
                .await;
        });
    }
}

/// The name of the tool `info` of `tools/list`, when it has one.
fn tool_name(info: &Value) -> Option<&str> {
    info.get("name").and_then(Value::as_str).filter(|name| !name.is_empty())
}

/// The `resultType` of a result that is no final one (`input_required`,
/// `task`): the call or the listing did not end with it.
fn unfinished(result: &Value) -> Option<&str> {
    result
        .get("resultType")
        .and_then(Value::as_str)
        .filter(|kind| *kind != "complete")
}

/// One configured header of server `name`, checked.
fn header(name: &str, key: &str, value: &str) -> Result<(axum::http::HeaderName, axum::http::HeaderValue), McpError> {
    let invalid = |e: String| McpError::config(format!("server `{name}`: header `{key}`: {e}"));
    let parsed_key = axum::http::HeaderName::try_from(key).map_err(|e| invalid(e.to_string()))?;
    let parsed_value = axum::http::HeaderValue::try_from(value).map_err(|e| invalid(e.to_string()))?;
    Ok((parsed_key, parsed_value))
}

/// Whether a JSON-RPC error of code `code`, answering `tools/call`, says
/// that the server refused the call before the tool ran: an invalid
/// request, an unknown method, invalid parameters (an unknown tool, in
/// most SDKs), an unknown resource.
fn refused_unread(code: i32) -> bool {
    matches!(code, -32600 | -32601 | -32602 | -32002)
}

/// How a call over HTTP found its server gone, or its session over.
#[derive(Debug, PartialEq)]
enum Lost {
    /// Nothing reached the tool, as the text says: the server no longer
    /// knew the session, or no connection could be made.
    Unsent(&'static str),
    /// The connection broke (it was reset, or closed before the answer), or
    /// the session's transport ended, once the call was sent.
    Broken,
}

/// How `error`, the failure of one call over HTTP, says that the server is
/// gone or the session over, when it does; the connection is then
/// replaced. Any other failure is the call's own (a status of 429 or 5xx
/// from the server or a proxy before it, a 500 with an HTML page, an
/// answer that cannot be read): rmcp keeps the session, and so do we.
fn lost(error: &ServiceError) -> Option<Lost> {
    use rmcp::transport::streamable_http_client::StreamableHttpError;
    let ServiceError::TransportSend(sent) = error else {
        return None;
    };
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(&*sent.error);
    while let Some(error) = cause {
        cause = error.source();
        if let Some(failure) = error.downcast_ref::<StreamableHttpError<mcp_reqwest::Error>>() {
            match failure {
                // The server answered 404 to the session (it restarted, or
                // let the session expire), before reading the request.
                StreamableHttpError::SessionExpired => {
                    return Some(Lost::Unsent(
                        "no longer knew the session of the last call (it restarted, or let the session expire)",
                    ));
                }
                // The session's worker has ended.
                StreamableHttpError::TransportChannelClosed => return Some(Lost::Broken),
                // rmcp gives the client's error as no source.
                StreamableHttpError::Client(e) => cause = Some(e),
                _ => {}
            }
        } else if let Some(e) = error.downcast_ref::<mcp_reqwest::Error>() {
            if e.is_connect() {
                return Some(Lost::Unsent(
                    "could not be reached (no connection could be made, so the call was not sent)",
                ));
            }
        } else if let Some(e) = error.downcast_ref::<hyper::Error>() {
            if e.is_incomplete_message() {
                return Some(Lost::Broken);
            }
        } else if let Some(e) = error.downcast_ref::<std::io::Error>() {
            use std::io::ErrorKind;
            if matches!(
                e.kind(),
                ErrorKind::ConnectionReset | ErrorKind::ConnectionAborted | ErrorKind::BrokenPipe
            ) {
                return Some(Lost::Broken);
            }
        }
    }
    None
}

/// The HTTP client of an `http` or `sse` server at `url`: plain `http://`, or
/// `https://` over rustls on ring with the platform's roots; redirects as
/// rmcp's own client takes them (same origin, 307 and 308 only, which keep
/// the message and send no header to another host).
fn http_client(name: &str, url: &str) -> Result<mcp_reqwest::Client, McpError> {
    use rustls_platform_verifier::BuilderVerifierExt as _;
    let scheme = url.split_once("://").map(|(scheme, _)| scheme.to_ascii_lowercase());
    if !matches!(scheme.as_deref(), Some("http" | "https")) {
        return Err(McpError::config(format!(
            "server `{name}`: the url `{}` is neither http:// nor https://",
            crate::text::clip(url)
        )));
    }
    let tls = rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .and_then(|builder| builder.with_platform_verifier())
        .map_err(|e| McpError::config(format!("server `{name}`: TLS cannot be set up: {e}")))?
        .with_no_client_auth();
    let redirects = mcp_reqwest::redirect::Policy::custom(|attempt| {
        let keeps_body = matches!(attempt.status().as_u16(), 307 | 308);
        let same_origin = attempt
            .previous()
            .first()
            .is_some_and(|first| first.origin() == attempt.url().origin());
        if !keeps_body || !same_origin {
            attempt.stop()
        } else if attempt.previous().len() > 10 {
            attempt.error("more than 10 redirects")
        } else {
            attempt.follow()
        }
    });
    mcp_reqwest::Client::builder()
        // As rmcp's client: no idle connections kept (a reused connection
        // whose last body was not read to its end stalls).
        .pool_max_idle_per_host(0)
        .redirect(redirects)
        .tls_backend_preconfigured(tls)
        .build()
        .map_err(|e| McpError::protocol(e).prefixed(&format!("server `{name}`: the HTTP client")))
}

/// A remote image (an image block, or a resource blob of an image type)
/// as content a provider accepts: its data must be base64 of an image,
/// labelled with the type its bytes show (a provider refuses an image
/// whose bytes are not of its declared type, and a refused result would
/// fail every later request of a conversation). Anything else becomes a
/// note saying what was sent. `uri`: the resource's, for the note.
fn remote_image(data: &Value, declared: Option<&str>, uri: Option<&str>) -> Content {
    let what = match uri {
        Some(uri) => format!("the image {}", crate::text::clip(uri)),
        None => "an image".to_owned(),
    };
    let data = data.as_str().unwrap_or_default();
    // Base64 wrapped over lines (as MIME writes it) is joined.
    let joined: String;
    let data = if data.contains(|c: char| c.is_ascii_whitespace()) {
        joined = data.chars().filter(|c| !c.is_ascii_whitespace()).collect();
        joined.as_str()
    } else {
        data
    };
    let bytes = crate::output::base64_decode(data).filter(|bytes| !bytes.is_empty());
    match bytes.as_deref().map(image_type) {
        Some(Some(mime_type)) => Content::Image {
            data: data.to_owned(),
            mime_type: mime_type.to_owned(),
        },
        Some(None) => Content::text(format!(
            "[{what} ({}) that the server sent in a form that cannot be shown]",
            crate::text::clip(declared.unwrap_or("no type given"))
        )),
        None => Content::text(format!("[{what} that the server sent without readable data]")),
    }
}

/// The type of image `bytes` hold, by their first bytes: the types every
/// provider accepts.
fn image_type(bytes: &[u8]) -> Option<&'static str> {
    match bytes {
        [0x89, b'P', b'N', b'G', ..] => Some("image/png"),
        [0xFF, 0xD8, 0xFF, ..] => Some("image/jpeg"),
        [b'G', b'I', b'F', b'8', ..] => Some("image/gif"),
        [b'R', b'I', b'F', b'F', _, _, _, _, b'W', b'E', b'B', b'P', ..] => Some("image/webp"),
        _ => None,
    }
}

/// A `CallToolResult` as the runtime's output.
fn output_of(result: &Value) -> ToolOutput {
    let mut content = Vec::new();
    for block in result["content"].as_array().into_iter().flatten() {
        match block["type"].as_str() {
            Some("text") => content.push(Content::text(block["text"].as_str().unwrap_or_default())),
            Some("image") => content.push(remote_image(&block["data"], block["mimeType"].as_str(), None)),
            Some("resource")
                if block["resource"]["blob"].is_string()
                    && block["resource"]["mimeType"]
                        .as_str()
                        .is_some_and(|t| t.starts_with("image/")) =>
            {
                let resource = &block["resource"];
                content.push(remote_image(
                    &resource["blob"],
                    resource["mimeType"].as_str(),
                    resource["uri"].as_str(),
                ));
            }
            Some("resource") if block["resource"]["blob"].is_string() => content.push(Content::Document {
                data: block["resource"]["blob"].as_str().unwrap_or_default().to_owned(),
                mime_type: block["resource"]["mimeType"]
                    .as_str()
                    .unwrap_or("application/octet-stream")
                    .to_owned(),
                // The uri names the document; it can be a `data:` URI of
                // any length, so it is cut as any name.
                title: block["resource"]["uri"]
                    .as_str()
                    .map(|uri| crate::text::clip(uri).into_owned()),
            }),
            Some("resource") if block["resource"]["text"].is_string() => {
                let resource = &block["resource"];
                let text = resource["text"].as_str().unwrap_or_default();
                // The model reads which resource the text is.
                content.push(Content::text(match resource["uri"].as_str() {
                    Some(uri) => match resource["mimeType"].as_str() {
                        Some(mime_type) => format!("{uri} ({mime_type}):\n{text}"),
                        None => format!("{uri}:\n{text}"),
                    },
                    None => text.to_owned(),
                }));
            }
            // No provider takes audio in a tool result: the model reads
            // what it was, not its base64.
            Some("audio") => {
                let mime_type = block["mimeType"].as_str().unwrap_or("audio");
                let bytes = block["data"].as_str().map_or(0, |data| data.len() / 4 * 3);
                content.push(Content::text(format!(
                    "[audio ({mime_type}, about {bytes} bytes) that cannot be shown here]"
                )));
            }
            // Resource links and blocks of later revisions: as JSON.
            _ => content.push(Content::text(block.to_string())),
        }
    }
    let structured_content = result.get("structuredContent").filter(|v| !v.is_null()).cloned();
    // A server should also send structured content as text (MCP leaves it
    // a SHOULD); when it sent none, the model reads the JSON, as it would
    // from a native tool.
    if content.is_empty()
        && let Some(value) = &structured_content
    {
        content.push(Content::text(value.to_string()));
    }
    ToolOutput {
        content,
        structured_content,
        is_error: result["isError"].as_bool().unwrap_or(false),
    }
}

/// One remote tool in the registry.
struct RemoteTool {
    definition: ToolDefinition,
    remote_name: String,
    connection: Arc<Connection>,
    /// The remote schema admits no keys but its properties
    /// (`additionalProperties: false`): a key the binder ignored is then
    /// not sent on.
    rejects_unknown: bool,
    /// The local keys given to property keys no provider accepts: a
    /// call's arguments are sent under the server's keys.
    local_keys: LocalKeys,
}

impl RemoteTool {
    /// The tool `info` describes (a `Tool` of `tools/list`), as `local`.
    /// A property key that no provider accepts is given a local one, in
    /// the parameters and in the objects they take (see [`LocalKeys`]);
    /// `Err` holds such a key where none can be given (in a member of a
    /// union), which would make every request that offers the tool fail.
    fn new(local: String, info: &Value, connection: Arc<Connection>) -> Result<Self, String> {
        let remote_name = info["name"].as_str().unwrap_or_default().to_owned();
        let (imported, local_keys) =
            import_input_schema_with_local_keys(&info["inputSchema"], is_valid_property_name, local_keys);
        let imported = imported.with_output_schema(info.get("outputSchema"));
        if let Some(key) = imported.refused_property_key(is_valid_property_name) {
            return Err(key.to_owned());
        }
        let hints = &info["annotations"];
        let annotations = ToolAnnotations {
            title: info["title"]
                .as_str()
                .or_else(|| hints["title"].as_str())
                .map(str::to_owned),
            read_only: hints["readOnlyHint"].as_bool(),
            destructive: hints["destructiveHint"].as_bool(),
            idempotent: hints["idempotentHint"].as_bool(),
            open_world: hints["openWorldHint"].as_bool(),
        };
        let mut description = info["description"].as_str().unwrap_or_default().to_owned();
        // Cut as the descriptions inside its schema are.
        cut_description(&mut description);
        let rejects_unknown = imported.params.rejects_unknown;
        let definition = ToolDefinition::new(local, description, imported.params.fields)
            .with_other_params(imported.params.others)
            .with_open_params(!rejects_unknown)
            .with_input_schema(imported.schema)
            // Well-formed, of type `object`, or none: MCP's output schemas
            // describe objects, and a malformed one would make a strict
            // client refuse the whole listing that passes it on.
            .with_output_schema(imported.output_schema)
            .with_annotations(annotations)
            .with_context_param(true)
            .with_tags([format!("mcp:{}", connection.name)]);
        Ok(RemoteTool {
            definition,
            remote_name,
            connection,
            rejects_unknown,
            local_keys,
        })
    }

    /// About how many bytes the tool adds to a request that offers it: its
    /// description and schemas, written out.
    fn definition_size(&self) -> usize {
        let written = |schema: &Value| schema.to_string().len();
        self.definition.description().len()
            + written(self.definition.input_schema().as_value())
            + self
                .definition
                .output_schema()
                .map_or(0, |schema| written(schema.as_value()))
    }
}

impl Tool for RemoteTool {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn invoke(&self, arguments: BoundArguments, _scope: &CallScope<'_>) -> Result<ToolFuture, Vec<CallError>> {
        let connection = self.connection.clone();
        let tool = self.remote_name.clone();
        let mut arguments = arguments.into_map();
        if self.rejects_unknown {
            self.definition.params().retain_named(&mut arguments);
        }
        self.local_keys.to_remote(&mut arguments);
        // The registry drops this future on time-out or cancellation; rmcp
        // then sends the server `notifications/cancelled`.
        Ok(Box::pin(async move { connection.call(&tool, arguments).await }))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use tokio::io::AsyncReadExt as _;

    use super::*;

    #[tokio::test]
    async fn http_and_https_urls_get_a_client_and_other_schemes_are_refused() {
        for url in [
            "http://127.0.0.1:9/mcp",
            "https://127.0.0.1:9/mcp",
            "HTTPS://example.com/mcp",
        ] {
            let client = http_client("s", url).unwrap_or_else(|e| panic!("{url}: {e}"));
            use rmcp::transport::StreamableHttpClientTransport;
            use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
            let _transport =
                StreamableHttpClientTransport::with_client(client, StreamableHttpClientTransportConfig::with_uri(url));
        }
        for url in ["ws://127.0.0.1:9/mcp", "127.0.0.1:9/mcp"] {
            let error = http_client("s", url).unwrap_err();
            assert!(error.to_string().contains("neither http:// nor https://"), "{error}");
        }
    }

    /// An `https://` server is spoken to in TLS: the first bytes on the wire
    /// are a TLS handshake record (this listener never answers it, so the
    /// mount then fails, naming the server).
    #[tokio::test]
    async fn an_https_server_is_spoken_to_in_tls() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let first_bytes = tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut head = [0u8; 3];
            socket.read_exact(&mut head).await.unwrap();
            head
        });
        let url = format!("https://127.0.0.1:{port}/mcp");
        let config = McpConfig::from_json(&json!({"mcpServers": {"secure": {"type": "http", "url": url}}})).unwrap();
        let mut registry = ToolRegistry::new();
        let error = McpMounts::mount(&mut registry, config).await.unwrap_err();
        assert!(error.to_string().contains("server `secure`"), "{error}");
        // A safety net only: without TLS no connection would be made at all.
        let head = tokio::time::timeout(Duration::from_secs(60), first_bytes)
            .await
            .expect("the client connected")
            .unwrap();
        assert_eq!(head[..2], [0x16, 0x03], "a TLS handshake record, not {head:?}");
        assert!(registry.is_empty());
    }

    /// A call's transport failure over HTTP, as rmcp reports it.
    fn failed_send(error: impl std::error::Error + Send + Sync + 'static) -> ServiceError {
        ServiceError::TransportSend(rmcp::transport::DynamicTransportError::from_parts(
            "test",
            std::any::TypeId::of::<()>(),
            Box::new(error),
        ))
    }

    /// Only a failure that says the server is gone or the session over
    /// replaces the connection; an HTTP failure of the call alone keeps it.
    #[test]
    fn only_a_server_gone_or_a_session_over_loses_the_connection() {
        use rmcp::transport::streamable_http_client::{HttpStatusError, StreamableHttpError};
        type HttpError = StreamableHttpError<mcp_reqwest::Error>;
        let kept = [
            failed_send(HttpError::HttpStatus(HttpStatusError::new(503, Some("1".into())))),
            failed_send(HttpError::HttpStatus(HttpStatusError::new(429, None))),
            failed_send(HttpError::UnexpectedServerResponse(
                "HTTP 500 Internal Server Error: <html>".into(),
            )),
            failed_send(HttpError::UnexpectedContentType(Some("text/html".into()))),
            failed_send(std::io::Error::other("timed out")),
            ServiceError::TransportClosed,
            ServiceError::UnexpectedResponse,
        ];
        for error in &kept {
            assert_eq!(lost(error), None, "{error}");
        }
        assert!(matches!(
            lost(&failed_send(HttpError::SessionExpired)),
            Some(Lost::Unsent(what)) if what.contains("session")
        ));
        assert_eq!(
            lost(&failed_send(HttpError::TransportChannelClosed)),
            Some(Lost::Broken)
        );
        // Found through the sources of the error too.
        let reset = std::io::Error::from(std::io::ErrorKind::ConnectionReset);
        assert_eq!(lost(&failed_send(HttpError::Io(reset))), Some(Lost::Broken));
        let reset = std::io::Error::from(std::io::ErrorKind::ConnectionReset);
        assert_eq!(lost(&failed_send(McpError::io(reset))), Some(Lost::Broken));
    }

    #[test]
    fn only_errors_of_a_call_refused_unread_are_refusals() {
        for code in [-32600, -32601, -32602, -32002] {
            assert!(refused_unread(code), "{code}");
        }
        for code in [-32603, -32000, -32700, 0, 1] {
            assert!(!refused_unread(code), "{code}");
        }
    }

    /// A remote tool of `input_schema`, whose server is never reached.
    fn unreachable_tool(input_schema: Value) -> RemoteTool {
        let entry = ServerEntry::Stdio {
            command: "/nonexistent/mcp-server".into(),
            args: Vec::new(),
            env: std::collections::BTreeMap::new(),
            cwd: None,
        };
        let connection =
            Arc::new_cyclic(|me| Connection::new("s".into(), entry, Arc::new(McpConfig::default()), me.clone()));
        let info = json!({"name": "t", "description": "T", "inputSchema": input_schema});
        RemoteTool::new("s__t".into(), &info, connection).unwrap()
    }

    /// A registry of the remote tool `s__t` of `input_schema`.
    fn registry_of(input_schema: Value) -> ToolRegistry {
        let mut registry = ToolRegistry::new();
        registry.register(unreachable_tool(input_schema)).unwrap();
        registry
    }

    /// An object of one integer property, `max_results`, whose other keys
    /// are integers.
    fn integer_keys() -> Value {
        json!({
            "type": "object",
            "properties": {"max_results": {"type": "integer"}},
            "additionalProperties": {"type": "integer"},
        })
    }

    /// Completing a remote tool's arguments keeps the keys its schema
    /// admits beyond its properties, as bound (a call sends them), and
    /// leaves out one refused.
    #[test]
    fn a_completion_keeps_the_keys_a_remote_schema_admits() {
        let registry = registry_of(integer_keys());
        let completion = registry
            .complete("s__t", json!({"max_results": 1, "extra": "5", "bad": "x"}))
            .unwrap();
        assert_eq!(
            Value::Object(completion.arguments),
            json!({"max_results": 1, "extra": 5})
        );
        assert_eq!(completion.errors[0].code_path(), "unsupported_integer_literal:bad");

        // A refused key is told apart by the key itself: not by a path
        // that a key of 70 characters is cut in, nor one that starts with
        // the name of a key that was accepted.
        let long = "k".repeat(70);
        let completion = registry
            .complete(
                "s__t",
                json!({"max_results": 1, "max_results.b": "x", long.as_str(): "y"}),
            )
            .unwrap();
        assert_eq!(Value::Object(completion.arguments), json!({"max_results": 1}));
        assert_eq!(completion.errors.len(), 2, "{:?}", completion.errors);

        let registry = registry_of(json!({"type": "object", "properties": {"q": {"type": "string"}}}));
        let completion = registry.complete("s__t", json!({"q": "a", "other": [1]})).unwrap();
        assert_eq!(Value::Object(completion.arguments), json!({"q": "a", "other": [1]}));
    }

    #[tokio::test]
    async fn keys_the_remote_schema_gives_a_schema_are_bound_by_it() {
        let registry = registry_of(integer_keys());
        // Refused before the server is asked: `extra` must be an integer,
        // and `maxResults` is a key of its own, not an alias.
        let result = registry.call("s__t", json!({"extra": "x", "maxResults": true})).await;
        assert_eq!(
            result.error_codes(),
            ["unsupported_integer_literal:extra", "type_mismatch:maxResults"],
            "{}",
            result.text()
        );
    }

    #[test]
    fn a_call_tool_result_becomes_output() {
        let output = output_of(&json!({
            "content": [
                {"type": "text", "text": "hi"},
                {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
                {"type": "resource", "resource": {"uri": "file:///a.pdf", "mimeType": "application/pdf", "blob": "JVBE"}},
                {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "body"}},
                {"type": "audio", "data": "UklG", "mimeType": "audio/wav"},
            ],
            "structuredContent": {"n": 1},
            "isError": true,
        }));
        assert!(output.is_error);
        assert_eq!(output.structured_content, Some(json!({"n": 1})));
        assert_eq!(output.content.len(), 5);
        assert_eq!(output.content[0], Content::text("hi"));
        assert!(matches!(&output.content[1], Content::Image { mime_type, .. } if mime_type == "image/png"));
        assert!(matches!(&output.content[2], Content::Document { title: Some(t), .. } if t == "file:///a.pdf"));
        // A text resource says which resource it is.
        assert_eq!(output.content[3], Content::text("file:///a.txt:\nbody"));
        // Audio, which no provider takes in a result, is named, not dumped.
        assert_eq!(
            output.content[4],
            Content::text("[audio (audio/wav, about 3 bytes) that cannot be shown here]")
        );
    }

    /// A resource's uri names its document; a `data:` URI can be
    /// megabytes, which no format would cut or count: it is cut at once.
    #[test]
    fn a_document_s_uri_is_cut_as_its_title() {
        let uri = format!("data:application/pdf;base64,{}", "JVBE".repeat(100_000));
        let output = output_of(&json!({"content": [
            {"type": "resource", "resource": {"uri": uri, "mimeType": "application/pdf", "blob": "JVBE"}},
        ]}));
        let Content::Document { title: Some(title), .. } = &output.content[0] else {
            panic!("a document: {:?}", output.content)
        };
        assert!(title.len() < 200, "{} bytes", title.len());
        assert!(title.starts_with("data:application/pdf;base64,JVBE"), "{title}");
        assert!(title.ends_with("(cut, 400028 characters in all)"), "{title}");
    }

    /// A remote image reaches a provider only as an image it accepts:
    /// base64 of an image, labelled with the type its bytes show; an image
    /// resource is such an image too. Anything else is a note, never a
    /// block that a provider would refuse (and with it every later request
    /// of the conversation).
    #[test]
    fn remote_images_are_checked_and_labelled_by_their_bytes() {
        const PNG: &str = "iVBORw0KGgo=";
        let output = output_of(&json!({"content": [
            {"type": "image", "data": PNG, "mimeType": "image/jpeg"},
            {"type": "image", "data": "iVBORw0K\nGgo=", "mimeType": "image/png"},
            {"type": "resource", "resource": {"uri": "file:///shot.png", "mimeType": "image/png", "blob": PNG}},
            {"type": "image", "mimeType": "image/png"},
            {"type": "image", "data": "", "mimeType": "image/png"},
            {"type": "image", "data": "not base64!", "mimeType": "image/png"},
            {"type": "image", "data": "AAAAAAAA", "mimeType": "image/bmp"},
        ]}));
        let image = |data: &str| Content::Image {
            data: data.to_owned(),
            mime_type: "image/png".to_owned(),
        };
        assert_eq!(output.content[..3], [image(PNG), image(PNG), image(PNG)]);
        for note in &output.content[3..6] {
            assert_eq!(
                *note,
                Content::text("[an image that the server sent without readable data]")
            );
        }
        assert_eq!(
            output.content[6],
            Content::text("[an image (image/bmp) that the server sent in a form that cannot be shown]")
        );
    }

    /// A result of structured content alone still says something to the
    /// model: its JSON, as a native tool's would.
    #[test]
    fn structured_content_alone_is_read_as_its_json() {
        for content in [json!([]), Value::Null] {
            let mut result = json!({"structuredContent": {"temperature": 21}});
            if !content.is_null() {
                result["content"] = content;
            }
            let output = output_of(&result);
            assert_eq!(output.content, [Content::text(r#"{"temperature":21}"#)]);
            assert_eq!(output.structured_content, Some(json!({"temperature": 21})));
        }
    }
}
