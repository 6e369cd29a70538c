//! Mounting other MCP servers' tools: servers written with the official
//! Python SDK (`tests/python/mcp_remote_server.py`), over stdio and
//! streamable HTTP, joined to a registry under a prefix.

mod common {
    pub mod python;
}

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command};
use std::time::Duration;

use serde_json::{Value, json};
use tool_runtime::format::{Format, Selection};
use tool_runtime::mcp::{McpConfig, McpMounts};
use tool_runtime::{Content, Outcome, ToolRegistry};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The project's Python environment, made by its own script.
fn python() -> String {
    common::python::venv_python(&root()).display().to_string()
}

fn server_script() -> String {
    root().join("tests/python/mcp_remote_server.py").display().to_string()
}

/// A Python HTTP server process, killed when dropped.
struct HttpServer {
    child: Child,
    port: u16,
    /// The endpoint's path: `/mcp`, or `/sse` for the legacy transport.
    path: &'static str,
}

impl HttpServer {
    /// A server of `transport`: `http`, or `sse` (the legacy HTTP+SSE).
    fn start(python: &str, transport: &str, port: u16) -> Self {
        let path = if transport == "sse" { "/sse" } else { "/mcp" };
        let mut command = Command::new(python);
        command.args([server_script(), transport.into(), port.to_string()]);
        Self::spawn(command, port, path)
    }

    /// `command`, a server that listens on `port`, serving at `path`.
    fn spawn(mut command: Command, port: u16, path: &'static str) -> Self {
        let child = command
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("python starts");
        let server = HttpServer { child, port, path };
        // Ready when it accepts connections (a safety net of 60 s).
        for _ in 0..600 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return server;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("the Python MCP server did not start listening on port {port}");
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}{}", self.port, self.path)
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        self.kill();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Kills a process by id and waits until it is gone.
fn kill_pid(pid: u64) {
    let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
    assert!(
        gone_within(pid, Duration::from_secs(30)),
        "process {pid} outlived kill -9"
    );
}

/// Whether process `pid` is gone (or a zombie no one waited for yet) within
/// `limit`.
fn gone_within(pid: u64, limit: Duration) -> bool {
    let deadline = std::time::Instant::now() + limit;
    loop {
        let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // The state follows the command name in parentheses.
        let zombie = state
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'));
        if state.is_empty() || zombie {
            return true;
        }
        if std::time::Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

async fn mount(config: Value) -> (ToolRegistry, McpMounts) {
    let mut registry = ToolRegistry::new().with_timeout(Some(Duration::from_secs(60)));
    let config = McpConfig::from_json(&config).expect("the configuration reads");
    let mounts = McpMounts::mount(&mut registry, config)
        .await
        .expect("the server mounts");
    (registry, mounts)
}

/// The server's tools as it starts, in name order.
const ORIGINAL_TOOLS: [&str; 10] = [
    "py__add",
    "py__cancelled",
    "py__doomed",
    "py__fail",
    "py__forecast",
    "py__grow",
    "py__pid",
    "py__plan_trip",
    "py__reshape",
    "py__slow",
];

/// What both transports must do the same way.
async fn common_checks(registry: &ToolRegistry, mounts: &McpMounts) {
    let mut names = registry.names();
    names.sort_unstable();
    assert_eq!(names, ORIGINAL_TOOLS);
    assert_eq!(mounts.servers()[0].name, "py");
    assert_eq!(mounts.servers()[0].tools, ORIGINAL_TOOLS);

    // Coerced here, before the call leaves: the remote gets an int and a
    // list (pydantic would refuse a bare string for `list[str]`).
    let result = registry.call("py__add", json!({"a": "2", "b": 3, "tags": "x"})).await;
    assert!(!result.is_error, "{}", result.text());
    assert!(result.text().contains("5 int tags=['x']"), "{}", result.text());
    let warnings = result.warning_codes();
    assert_eq!(
        warnings,
        ["string_literal_converted_to_integer:a", "scalar_coerced_to_list:tags"]
    );

    // Refused here: the remote never sees it.
    let refused = registry.call("py__add", json!({"a": "two", "tags": []})).await;
    assert_eq!(refused.outcome(), Outcome::InvalidArguments, "{}", refused.text());
    let codes = refused.error_codes();
    assert!(codes.contains(&"missing_required:b".to_owned()), "{codes:?}");
    assert!(codes.iter().any(|c| c.ends_with(":a")), "{codes:?}");

    // Nested models behind `$ref`s are bound too.
    let trip = registry
        .call(
            "py__plan_trip",
            json!({"stops": [{"city": "Oslo", "nights": "2", "mode": "walk"}]}),
        )
        .await;
    assert!(!trip.is_error, "{}", trip.text());
    assert!(trip.text().starts_with("1 stops, first by walk"), "{}", trip.text());
    assert!(
        trip.warning_codes().iter().any(|w| w.contains("nights")),
        "{:?}",
        trip.warning_codes()
    );
    let refused = registry
        .call(
            "py__plan_trip",
            json!({"stops": [{"city": "", "mode": "fly"}], "budget": {"amount": 5, "currency": "eur"}}),
        )
        .await;
    assert_eq!(refused.outcome(), Outcome::InvalidArguments, "{}", refused.text());
    let codes = refused.error_codes().join(" ");
    for path in ["stops[0].city", "stops[0].mode", "budget.currency"] {
        assert!(codes.contains(path), "{path} in {codes}");
    }

    let failed = registry.call("py__fail", json!({"reason": "testing"})).await;
    assert!(failed.is_error, "{}", failed.text());
    assert!(
        failed.text().contains("failed on purpose: testing"),
        "{}",
        failed.text()
    );

    let structured = registry
        .call("py__forecast", json!({"city": "Oslo", "days": null}))
        .await;
    assert!(!structured.is_error, "{}", structured.text());
    let forecast = structured.structured_content.as_ref().expect("structured content");
    assert_eq!(forecast["celsius"], json!(21.5));
    assert_eq!(forecast["unit"], json!("c"));

    // A cancelled call (as a timed-out one: the registry drops it) sends
    // the server `notifications/cancelled`.
    let counts = || async {
        let result = registry.call("py__cancelled", json!({})).await;
        let counts = result.structured_content.expect("counts");
        (
            counts["started"].as_u64().unwrap(),
            counts["cancelled"].as_u64().unwrap(),
        )
    };
    let before = counts().await;
    let signal = tool_runtime::Cancellation::new();
    let call = registry.call_cancellable(tool_runtime::ToolCall::new("py__slow", json!({})), &signal);
    let cancel_once_started = async {
        for _ in 0..600 {
            if counts().await.0 > before.0 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        signal.cancel();
    };
    let (stopped, ()) = tokio::join!(call, cancel_once_started);
    assert_eq!(stopped.outcome(), Outcome::Cancelled, "{}", stopped.text());
    let mut seen = before;
    for _ in 0..600 {
        seen = counts().await;
        if seen.1 > before.1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        seen,
        (before.0 + 1, before.1 + 1),
        "the remote tool started, then saw its cancellation"
    );

    // The remote schema, normalised for every format like a native one.
    for format in [Format::Anthropic, Format::OpenAiChat, Format::Gemini, Format::Mcp] {
        let mut definitions = registry.definitions(format, &Selection::all()).to_json();
        // MCP passes the remote output schema on as the server wrote it.
        for tool in definitions.as_array_mut().into_iter().flatten() {
            tool.as_object_mut().unwrap().remove("outputSchema");
        }
        let definitions = definitions.to_string();
        assert!(definitions.contains("py__forecast"), "{definitions}");
        for absent in ["$ref", "$defs", "anyOf", "\"title\""] {
            assert!(!definitions.contains(absent), "{format:?} has {absent}: {definitions}");
        }
    }
}

/// `tools/list_changed` refreshes the set by itself: once the server has
/// added a tool, removed one and changed one's parameters, the registry
/// lists and calls the new set, with nothing asked of the application.
async fn list_changed_checks(registry: &ToolRegistry, mounts: &McpMounts) {
    assert!(registry.get("py__extra").is_none());
    let before = registry.call("py__reshape", json!({"n": 1})).await;
    assert_eq!(before.text(), "n=1 m=None");
    // Serialized, the required parameters come first, as the server
    // declared them (`n` before `m`, which sorted keys would reverse).
    let reshape = Selection::all().allow(["py__reshape"]);
    let text = serde_json::to_string(&registry.definitions(Format::Anthropic, &reshape)).unwrap();
    let properties = &text[text.find("\"properties\"").expect("properties")..];
    let (n, m) = (properties.find("\"n\"").unwrap(), properties.find("\"m\"").unwrap());
    assert!(n < m, "{text}");

    let grown = registry.call("py__grow", json!({})).await;
    assert_eq!(grown.text(), "grown");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while registry.get("py__extra").is_none() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the tool the server added is listed within 30 s: {:?}",
            registry.names()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    let mut names = registry.names();
    names.sort_unstable();
    let mut expected: Vec<&str> = ORIGINAL_TOOLS.iter().copied().filter(|n| *n != "py__doomed").collect();
    expected.push("py__extra");
    expected.sort_unstable();
    assert_eq!(names, expected);
    assert_eq!(mounts.servers()[0].tools, expected);
    let listed = registry.definitions(Format::Anthropic, &Selection::all()).to_json();
    let listed: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert!(
        listed.contains(&"py__extra") && !listed.contains(&"py__doomed"),
        "{listed:?}"
    );
    // Lint sees it too (its parameter has no description).
    let findings = registry.lint(&Selection::all().allow(["py__extra"]));
    assert!(
        findings.iter().any(|f| f.tool.as_deref() == Some("py__extra")),
        "{findings:?}"
    );

    let shout = registry.call("py__extra", json!({"word": "hi"})).await;
    assert_eq!(shout.text(), "HI");
    let removed = registry.call("py__doomed", json!({})).await;
    assert_eq!(removed.error_codes(), ["unknown_tool:py__doomed"]);
    // The new schema binds: `m` is required now, and refused here.
    let reshaped = registry.call("py__reshape", json!({"n": 1})).await;
    assert_eq!(reshaped.error_codes(), ["missing_required:m"], "{}", reshaped.text());
    let reshaped = registry.call("py__reshape", json!({"n": 1, "m": "2"})).await;
    assert_eq!(reshaped.text(), "n=1 m=2");
    assert_eq!(reshaped.warning_codes(), ["string_literal_converted_to_integer:m"]);
}

/// A registry with the servers of `config` mounted.
async fn mounted(config: McpConfig) -> (ToolRegistry, McpMounts) {
    let mut registry = ToolRegistry::new();
    let mounts = McpMounts::mount(&mut registry, config).await.expect("mounts");
    (registry, mounts)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mounts_a_python_server_over_stdio() {
    let python = python();
    let config = json!({"mcpServers": {"py": {"command": python, "args": [server_script(), "stdio"]}}});
    let (registry, mounts) = mount(config).await;
    common_checks(&registry, &mounts).await;
    list_changed_checks(&registry, &mounts).await;

    // Killed: the next call says so and the server is started again; the
    // call after that runs on the new process.
    let first = registry.call("py__pid", json!({})).await;
    let pid = first
        .structured_content
        .as_ref()
        .and_then(|s| s["result"].as_u64())
        .expect("a pid");
    kill_pid(pid);
    let lost = registry.call("py__add", json!({"a": 1, "b": 1, "tags": []})).await;
    assert!(lost.is_error, "{}", lost.text());
    assert!(lost.text().contains("MCP server `py`"), "{}", lost.text());
    let again = registry.call("py__pid", json!({})).await;
    assert!(!again.is_error, "{}", again.text());
    let new_pid = again.structured_content.as_ref().and_then(|s| s["result"].as_u64());
    assert!(new_pid.is_some_and(|p| p != pid), "{new_pid:?} after {pid}");
    // The new process offers the tools it starts with; the reconnect
    // listed them again.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while registry.get("py__doomed").is_none() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the restarted server's tools are listed within 30 s: {:?}",
            registry.names()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let mut names = registry.names();
    names.sort_unstable();
    assert_eq!(names, ORIGINAL_TOOLS);

    // Closed: the server process ends, and no call starts it again.
    let pid = registry.call("py__pid", json!({})).await.structured_content.unwrap()["result"]
        .as_u64()
        .unwrap();
    mounts.close().await;
    assert!(
        gone_within(pid, Duration::from_secs(30)),
        "the server exits once closed"
    );
    let closed = registry.call("py__add", json!({"a": 1, "b": 1, "tags": []})).await;
    assert!(
        closed.is_error && closed.text().contains("was closed"),
        "{}",
        closed.text()
    );
    assert!(gone_within(pid, Duration::ZERO), "no call started it again");
    assert_eq!(mounts.servers()[0].tools.len(), ORIGINAL_TOOLS.len(), "its tools stay");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mounts_a_python_server_over_streamable_http() {
    mounts_a_python_server_over_http("http", "mcp_servers").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mounts_a_python_server_over_the_legacy_sse_transport() {
    mounts_a_python_server_over_http("sse", "mcpServers").await;
}

/// Mounts a server speaking `transport` (`http` or `sse`), configured
/// under `key`; then kills it, and starts it again.
async fn mounts_a_python_server_over_http(transport: &str, key: &str) {
    let python = python();
    let port = free_port();
    let mut server = HttpServer::start(&python, transport, port);
    let config = json!({key: {"py": {"type": transport, "url": server.url()}}});
    let (registry, mounts) = mount(config).await;
    common_checks(&registry, &mounts).await;
    list_changed_checks(&registry, &mounts).await;

    // Killed: calls fail with a clear error until it is back.
    server.kill();
    let lost = registry.call("py__add", json!({"a": 1, "b": 1, "tags": []})).await;
    assert!(lost.is_error, "{}", lost.text());
    assert!(lost.text().contains("MCP server `py`"), "{}", lost.text());
    if transport == "http" {
        // No connection could be made, so nothing was sent.
        assert!(lost.text().contains("was not sent"), "{}", lost.text());
        assert!(!lost.text().contains("may have run"), "{}", lost.text());
    }
    let _server = HttpServer::start(&python, transport, port);
    let mut back = registry.call("py__add", json!({"a": 1, "b": 1, "tags": []})).await;
    if back.is_error {
        // The call that found it gone may have reconnected already, or not.
        back = registry.call("py__add", json!({"a": 1, "b": 1, "tags": []})).await;
    }
    assert!(!back.is_error, "{}", back.text());
    assert!(back.text().contains("2 int"), "{}", back.text());
    listed_again_after_restart(&registry).await;
}

/// A server over streamable HTTP that restarts between two calls no longer
/// knows the session: the call that finds out says the server was
/// reconnected and that the call can be made again (the server refused it
/// unread), and the restarted server's tools are listed again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_http_server_is_reconnected_and_listed_again() {
    let python = python();
    let port = free_port();
    let mut server = HttpServer::start(&python, "http", port);
    let config = json!({"mcpServers": {"py": {"type": "http", "url": server.url()}}});
    let (registry, _mounts) = mount(config).await;
    list_changed_checks(&registry, &_mounts).await;
    server.kill();
    let _server = HttpServer::start(&python, "http", port);
    let found = registry.call("py__add", json!({"a": 1, "b": 1, "tags": []})).await;
    let text = found.text();
    assert!(found.is_error, "{text}");
    assert!(
        text.contains("MCP server `py`") && text.contains("reconnected"),
        "{text}"
    );
    assert!(text.contains("can be made again"), "{text}");
    let again = registry.call("py__add", json!({"a": 1, "b": 1, "tags": []})).await;
    assert!(!again.is_error, "{}", again.text());
    listed_again_after_restart(&registry).await;
}

/// Waits (a safety net of 30 s) until the registry holds the restarted
/// server's first set of tools again: the set that
/// [`list_changed_checks`] changed is gone with the server it changed.
async fn listed_again_after_restart(registry: &ToolRegistry) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while registry.get("py__doomed").is_none() || registry.get("py__extra").is_some() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the restarted server's tools are listed again within 30 s: {:?}",
            registry.names()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_url_without_a_type_reaches_a_server_of_either_transport() {
    let python = python();
    for transport in ["http", "sse"] {
        let server = HttpServer::start(&python, transport, free_port());
        // Claude Code's form: a `url` alone. A legacy server refuses the
        // streamable POST, and is reached over SSE.
        let (registry, mounts) = mount(json!({"mcpServers": {"py": {"url": server.url()}}})).await;
        assert_eq!(mounts.servers()[0].tools, ORIGINAL_TOOLS, "over {transport}");
        let added = registry.call("py__add", json!({"a": "2", "b": 3, "tags": []})).await;
        assert!(!added.is_error, "over {transport}: {}", added.text());
        assert!(added.text().contains("5 int"), "{}", added.text());
        mounts.close().await;

        // The Messages API's list form, with its tool filter.
        let (registry, mounts) = mount(json!({"mcp_servers": [{
            "type": "url", "name": "py", "url": server.url(), "authorization_token": "unchecked",
            "tool_configuration": {"enabled": true, "allowed_tools": ["add", "grow", "no_such_tool"]},
        }]}))
        .await;
        assert_eq!(mounts.servers()[0].tools, ["py__add", "py__grow"], "over {transport}");
        let left_out = registry.call("py__fail", json!({})).await;
        assert!(
            left_out.error_codes() == ["unknown_tool:py__fail"],
            "{:?}",
            left_out.error_codes()
        );
        mounts.close().await;
    }
}

/// The error of mounting `config`, which fails and adds no tool.
async fn mount_error(config: McpConfig) -> String {
    let mut registry = ToolRegistry::new();
    let error = McpMounts::mount(&mut registry, config)
        .await
        .expect_err("mounting fails");
    assert!(registry.is_empty());
    error.to_string()
}

#[tokio::test]
async fn an_sse_server_that_does_not_answer_is_a_clear_error() {
    let config =
        McpConfig::from_json(&json!({"mcpServers": {"legacy": {"type": "sse", "url": "http://127.0.0.1:9/sse"}}}))
            .unwrap();
    let error = mount_error(config).await;
    assert!(error.contains("legacy SSE transport"), "{error}");
}

#[tokio::test]
async fn a_server_that_cannot_start_is_a_clear_error() {
    let config =
        McpConfig::from_json(&json!({"mcpServers": {"ghost": {"command": "/nonexistent/mcp-server"}}})).unwrap();
    let text = mount_error(config).await;
    assert!(
        text.contains("server `ghost`") && text.contains("/nonexistent/mcp-server"),
        "{text}"
    );
}

/// A server that cannot be mounted (one that does not start, one that does
/// not answer) is reported on its own; the others mount.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_cannot_mount_does_not_sink_the_others() {
    let python = python();
    let config = McpConfig::from_json(&json!({"mcpServers": {
        "ghost": {"command": "/nonexistent/mcp-server"},
        "legacy": {"type": "sse", "url": "http://127.0.0.1:9/sse"},
        "py": {"command": python, "args": [server_script(), "stdio"]},
    }}))
    .unwrap();
    let mut registry = ToolRegistry::new();
    let mounts = McpMounts::mount(&mut registry, config)
        .await
        .expect("the healthy server mounts");
    let servers = mounts.servers();
    assert_eq!(servers.len(), 1, "{servers:?}");
    assert_eq!(servers[0].name, "py");
    let added = registry.call("py__add", json!({"a": 1, "b": "2", "tags": []})).await;
    assert!(!added.is_error, "{}", added.text());
    let failures: Vec<(&str, String)> = mounts
        .failures()
        .iter()
        .map(|f| (f.name.as_str(), f.error.to_string()))
        .collect();
    assert_eq!(failures.len(), 2, "{failures:?}");
    assert_eq!(failures[0].0, "ghost");
    assert!(failures[0].1.contains("/nonexistent/mcp-server"), "{failures:?}");
    assert_eq!(failures[1].0, "legacy");
    assert!(failures[1].1.contains("server `legacy`"), "{failures:?}");
    assert!(registry.names().iter().all(|name| name.starts_with("py__")));
}

/// When no server of several can be mounted, the error names each.
#[tokio::test]
async fn when_no_server_mounts_the_error_names_each() {
    let config = McpConfig::from_json(&json!({"mcpServers": {
        "ghost": {"command": "/nonexistent/mcp-server"},
        "legacy": {"type": "sse", "url": "http://127.0.0.1:9/sse"},
    }}))
    .unwrap();
    let text = mount_error(config).await;
    assert!(
        text.contains("server `ghost`") && text.contains("server `legacy`"),
        "{text}"
    );
}

#[tokio::test]
async fn a_server_silent_past_the_connect_timeout_is_a_clear_error() {
    let config = McpConfig::from_json(&json!({"mcpServers": {"mute": {"command": "sleep", "args": ["30"]}}}))
        .unwrap()
        .with_connect_timeout(Duration::from_millis(500));
    let started = std::time::Instant::now();
    let error = mount_error(config).await;
    assert!(error.contains("no answer to the handshake within 0.5 s"), "{error}");
    assert!(started.elapsed() < Duration::from_secs(20), "the limit holds");
}

/// A raw server of `tests/python/mcp_odd_server.py` in `mode`, and the file
/// its starts are logged to.
fn odd_server(mode: &str) -> (McpConfig, tempfile_path::Path) {
    let log = tempfile_path::Path::new(mode);
    let script = root().join("tests/python/mcp_odd_server.py").display().to_string();
    let config = McpConfig::from_json(&json!({"mcpServers": {
        "odd": {"command": "python3", "args": [script, mode, log.0.display().to_string()]},
    }}))
    .unwrap();
    (config, log)
}

/// A log file in the system's temporary folder, removed when dropped.
mod tempfile_path {
    pub struct Path(pub std::path::PathBuf);

    impl Path {
        pub fn new(name: &str) -> Self {
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos();
            Path(std::env::temp_dir().join(format!("mcp-{name}-{}-{nanos}.log", std::process::id())))
        }

        pub fn lines(&self) -> usize {
            std::fs::read_to_string(&self.0).map_or(0, |text| text.lines().count())
        }

        /// How many of its lines are `line`.
        pub fn count(&self, line: &str) -> usize {
            std::fs::read_to_string(&self.0).map_or(0, |text| text.lines().filter(|l| *l == line).count())
        }

        /// Its lines that start with `prefix`.
        pub fn starting(&self, prefix: &str) -> Vec<String> {
            std::fs::read_to_string(&self.0).map_or_else(
                |_| Vec::new(),
                |text| {
                    text.lines()
                        .filter(|l| l.starts_with(prefix))
                        .map(str::to_owned)
                        .collect()
                },
            )
        }
    }

    impl Drop for Path {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }
}

/// A raw stdio MCP server (standard library only) written here, run as
/// `python3 -c RAW_SERVER MODE LOG`, for what `mcp_odd_server.py` does not
/// do. Each `initialize` and each `tools/list` appends its method to LOG.
///
/// - `unreadable`: a call's result is a string, not an object;
/// - `lenient`: `tools/list` holds tools rmcp's types refuse (a schema of
///   `true`, a hint that is a string), tools that are none (no name, not an
///   object) and a tool that runs only as a task; a call answers with a
///   block rmcp's types refuse (an image without `mimeType`);
/// - `names`: tools whose names are alike once made provider names, and a
///   tool listed twice; a call answers with the name it was called by;
/// - `paged`: 2,000 tools, in pages of 100;
/// - `relist_crashes`: the first process answers its first `tools/list` and
///   then announces a change; every later `tools/list` announces a change
///   and makes the server exit;
/// - `dies_in_call`: a call makes the server exit without an answer;
/// - `long_cursor`: the first page of `tools/list` names a next page by a
///   cursor of 5,000 characters;
/// - `call_errors`: a call of `invalid`, `internal` or `custom` is answered
///   with a JSON-RPC error of code -32602, -32603 or 7;
/// - `relist_announces`: each `tools/list` answer is followed by
///   `notifications/tools/list_changed`, the list staying the same;
/// - `keys`: a tool whose property keys no provider accepts (`$filter`,
///   `file path`, `größe`), one with such keys inside its parameters'
///   objects, one with such a key in a member of a union, and `t`; a call
///   answers with its arguments as JSON;
/// - `bulky`: a tool with descriptions of 10,000 characters, then 20 tools
///   of about 120 KB each;
/// - `grows`: lists `read.file` until it is first called, then announces a
///   change and lists `read_file` too;
/// - `forks`: the first call starts a process that ignores the end of its
///   input (`sleep`), and each call answers with the server's process id
///   and that process's.
const RAW_SERVER: &str = r#"
import json
import os
import subprocess
import sys

mode, log = sys.argv[1], sys.argv[2]


def send(message):
    sys.stdout.write(json.dumps(dict(message, jsonrpc="2.0")) + "\n")
    sys.stdout.flush()


def note(method):
    with open(log, "a") as f:
        f.write(method + "\n")


def count(method):
    with open(log) as f:
        return sum(1 for line in f if line.strip() == method)


def tool(name, **more):
    return dict({"name": name, "description": "A tool.", "inputSchema": {"type": "object", "properties": {}}}, **more)


CHANGED = {"method": "notifications/tools/list_changed"}
LISTS = {
    "lenient": [
        tool("plain"),
        tool("any", inputSchema=True),
        tool("hinted", annotations={"readOnlyHint": "true"}),
        tool(7),
        "not a tool",
        tool("task_only", execution={"taskSupport": "required"}),
        tool("task_optional", execution={"taskSupport": "optional"}),
    ],
    "shaped": [
        tool("listed", outputSchema={"type": "array", "items": {"type": "string"}}),
        tool("counted", outputSchema={"type": "object", "properties": {"n": {"type": "integer"}}}),
        tool("malformed", outputSchema={
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {"x": {"type": "strin"}, "n": {"type": "integer", "minimum": "0"}},
            "required": "x",
        }),
        tool("maybe", inputSchema={"type": "object", "properties": {
            "n": {"anyOf": [{"type": "integer"}, {"type": "null", "description": "none"}]},
            "m": {"anyOf": [{"const": None}, {"type": "integer"}]},
            "k": {"oneOf": [{"type": "integer"}, {"enum": [None]}]},
        }}),
    ],
    "call_errors": [tool("invalid"), tool("internal"), tool("custom")],
    "keys": [
        tool("search", inputSchema={"type": "object", "additionalProperties": False, "required": ["file path"], "properties": {
            "$filter": {"type": "string", "description": "An OData filter."},
            "_filter": {"type": "string"},
            "file path": {"type": "string"},
            "gr\u00f6\u00dfe": {"type": "integer"},
        }}),
        tool("nested", inputSchema={"type": "object", "properties": {
            "options": {"type": "object", "properties": {"a b": {"type": "string"}}},
            "rows": {"type": "array", "items": {
                "type": "object", "additionalProperties": False, "required": ["$n"],
                "properties": {"$n": {"type": "integer"}},
            }},
        }}),
        tool("union", inputSchema={"type": "object", "properties": {
            "u": {"anyOf": [{"type": "object", "properties": {"a b": {}}}, {"type": "string"}]},
        }}),
        tool("t"),
    ],
    "bulky": [
        tool("described", description="d" * 10000, inputSchema={"type": "object", "properties": {
            "x": {"type": "string", "description": "p" * 10000},
        }}),
    ] + [
        tool("t%d" % i, inputSchema={"type": "object", "properties": {
            "x": {"enum": ["value-%02d-%05d" % (i, n) for n in range(8000)]},
        }})
        for i in range(20)
    ],
    "names": [
        tool("read.file"),
        tool("read_file"),
        tool("\u8bfb\u6587\u4ef6"),
        tool("\u5199\u6587\u4ef6"),
        tool("dup"),
        tool("dup"),
    ],
}

grown = False
started = []

for line in sys.stdin.buffer:
    message = json.loads(line)
    method, id_ = message.get("method"), message.get("id")
    if id_ is None:
        continue
    params = message.get("params") or {}
    if method == "initialize":
        note(method)
        send({"id": id_, "result": {
            "protocolVersion": params["protocolVersion"],
            "capabilities": {"tools": {"listChanged": True}},
            "serverInfo": {"name": "raw", "version": "0"},
        }})
    elif method == "tools/list":
        note(method)
        if mode == "relist_crashes" and count(method) > 1:
            send(CHANGED)
            sys.exit(1)
        page = {"tools": LISTS.get(mode, [tool("t")])}
        if mode == "paged":
            cursor = int(params.get("cursor") or 0)
            page = {"tools": [tool("t%d" % (cursor * 100 + i)) for i in range(100)]}
            if cursor < 19:
                page["nextCursor"] = str(cursor + 1)
        if mode == "shaped":
            page["nextCursor"] = ""
        if mode == "looping":
            page["nextCursor"] = "again"
        if mode == "long_cursor" and not params.get("cursor"):
            page["nextCursor"] = "c" * 5000
        if mode == "grows":
            page = {"tools": [tool("read.file")] + ([tool("read_file")] if grown else [])}
        send({"id": id_, "result": page})
        if mode in ("relist_crashes", "relist_announces"):
            send(CHANGED)
    elif method == "tools/call":
        if mode == "dies_in_call":
            sys.exit(1)
        if mode == "call_errors":
            code = {"invalid": -32602, "internal": -32603}.get(params["name"], 7)
            send({"id": id_, "error": {"code": code, "message": "error of " + params["name"]}})
            continue
        result = {"content": [{"type": "text", "text": params["name"]}]}
        if mode == "keys":
            text = json.dumps(params.get("arguments"), sort_keys=True, ensure_ascii=False)
            result = {"content": [{"type": "text", "text": text}]}
        if mode == "forks":
            if not started:
                started.append(subprocess.Popen(["sleep", "600"], stdin=subprocess.DEVNULL,
                                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            text = "%d %d" % (os.getpid(), started[0].pid)
            result = {"content": [{"type": "text", "text": text}]}
        if mode == "unreadable":
            result = "done"
        elif mode == "lenient":
            result = {"content": [{"type": "text", "text": "ok"}, {"type": "image", "data": "iVBORw0KGgo="}]}
        send({"id": id_, "result": result})
        if mode == "grows" and not grown:
            grown = True
            send(CHANGED)
    else:
        send({"id": id_, "result": {}})
"#;

/// A server of [`RAW_SERVER`] in `mode`, named `raw`, and its log.
fn raw_server(mode: &str) -> (McpConfig, tempfile_path::Path) {
    let log = tempfile_path::Path::new(mode);
    let config = McpConfig::from_json(&json!({"mcpServers": {
        "raw": {"command": "python3", "args": ["-c", RAW_SERVER, mode, log.0.display().to_string()]},
    }}))
    .unwrap();
    (config, log)
}

/// A server whose `tools/list` always names a next page cannot hold the
/// mounting up for ever.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_pages_for_ever_is_a_clear_error() {
    let (config, _log) = odd_server("endless");
    let error = mount_error(config).await;
    assert!(error.contains("still a next page after 100 pages"), "{error}");
}

/// A server whose pages lead back to one read before is a clear error,
/// found at once rather than after the page limit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listing_that_loops_is_a_clear_error() {
    let (config, log) = raw_server("looping");
    let error = mount_error(config).await;
    assert!(
        error.contains("the cursor of an earlier page was sent again"),
        "{error}"
    );
    assert_eq!(log.count("tools/list"), 2);
}

/// What one server can put before the model is bounded: at most 1,000
/// tools, the first listed, and none larger than 256 KiB.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_s_tools_are_bounded_in_number_and_size() {
    let (config, _log) = odd_server("many");
    let (registry, mounts) = mounted(config).await;
    let names = registry.names();
    assert_eq!(names.len(), 1000);
    assert_eq!(names.first().map(String::as_str), Some("odd__t0"));
    assert_eq!(names.last().map(String::as_str), Some("odd__t999"));
    mounts.close().await;
}

/// However fast a server announces changes, at most one listing waits to
/// run: a flood of `tools/list_changed` while a listing is slow does not
/// pile up a task for each.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_list_changes_queues_one_listing() {
    let (config, _log) = odd_server("flood");
    let (registry, mounts) = mounted(config).await;
    let before = tokio::runtime::Handle::current().metrics().num_alive_tasks();
    let result = registry.call("odd__t", json!({})).await;
    assert_eq!(result.text(), "flooded");
    // The notifications came before the answer; the listing they asked
    // for takes 3 s.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let alive = tokio::runtime::Handle::current().metrics().num_alive_tasks();
    assert!(alive < before + 100, "{before} tasks before the flood, {alive} after");
    mounts.close().await;
}

/// An answer that cannot be read (a result that is no object) comes from a
/// live server, which may have run the tool: the call fails, and the server
/// is neither stopped nor started again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreadable_answer_does_not_restart_a_live_server() {
    let (config, log) = raw_server("unreadable");
    let (registry, mounts) = mounted(config).await;
    for _ in 0..3 {
        let result = registry.call("raw__t", json!({})).await;
        assert!(result.is_error, "{}", result.text());
        assert!(result.text().contains("The tool may have run"), "{}", result.text());
    }
    assert_eq!(log.count("initialize"), 1, "started once");
    mounts.close().await;
}

/// Schemas a provider refuses as a remote server wrote them: a root union
/// (the Anthropic API refuses every request whose tools have one) is folded
/// into one object, and free-form objects keep a plain definition where a
/// strict one would be refused. Arguments still bind and coerce.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn remote_schemas_are_made_acceptable_to_every_provider() {
    let (config, _log) = odd_server("shapes");
    let (registry, mounts) = mounted(config).await;
    for format in Format::ALL {
        let definitions = registry.definitions(*format, &Selection::all()).to_json();
        let text = definitions.to_string();
        // Gemini's declarations come in one tool object.
        let tools = definitions
            .as_array()
            .or_else(|| definitions["functionDeclarations"].as_array());
        for tool in tools.unwrap_or_else(|| panic!("{format:?}: {text}")) {
            let schema = ["input_schema", "parameters", "inputSchema"]
                .iter()
                .find_map(|key| {
                    tool.get(*key)
                        .or_else(|| tool.get("function").and_then(|f| f.get(*key)))
                })
                .unwrap_or_else(|| panic!("{format:?}: no schema in {tool}"));
            for union in ["anyOf", "oneOf", "allOf"] {
                assert!(schema.get(union).is_none(), "{format:?}: root {union} in {text}");
            }
            // Gemini writes its types in capitals.
            let ty = schema["type"].as_str().map(str::to_ascii_lowercase);
            assert_eq!(ty.as_deref(), Some("object"), "{format:?}: {text}");
            let strict = tool
                .get("strict")
                .or_else(|| tool.get("function").and_then(|f| f.get("strict")));
            let name = tool.get("name").or_else(|| tool["function"].get("name")).unwrap();
            if name == "odd__store" {
                assert_ne!(
                    strict,
                    Some(&json!(true)),
                    "{format:?}: a free-form object made strict: {tool}"
                );
            }
        }
    }
    // The folded schema binds: `"7"` reaches the remote integer as 7.
    let result = registry.call("odd__pick", json!({"id": "7", "depth": 1})).await;
    assert!(!result.is_error, "{}", result.text());
    assert_eq!(result.text(), r#"{"depth": 1, "id": 7}"#);
    assert_eq!(result.warnings.len(), 1, "{:?}", result.warnings);
    let result = registry.call("odd__pick", json!({"path": "a/b"})).await;
    assert!(result.is_error, "{}", result.text());
    assert!(result.text().contains("depth"), "{}", result.text());
    mounts.close().await;
}

/// A server that mounted, then exits on every later `tools/list`, is not
/// started over and over in the background: its tools are listed again
/// only on a live connection, and only a call starts it again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_dies_on_every_relisting_is_not_restarted_in_the_background() {
    let (config, log) = raw_server("relist_crashes");
    let (registry, mounts) = mounted(config).await;
    // The listing its announcement asks for makes it exit.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while log.count("tools/list") < 2 {
        assert!(tokio::time::Instant::now() < deadline, "listed again within 30 s");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(log.count("initialize"), 1, "started once, with no call");
    assert_eq!(mounts.servers()[0].tools, ["raw__t"], "its set stays");
    let result = registry.call("raw__t", json!({})).await;
    assert!(result.is_error, "{}", result.text());
    assert!(result.text().contains("reconnected"), "{}", result.text());
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(log.count("initialize"), 2, "started again by the call alone");
    mounts.close().await;
}

/// A tool rmcp's types refuse (a schema of `true`, a hint that is a
/// string) is read all the same, and what is no tool at all (no name, not
/// an object) is left out: the server's other tools mount. A result's
/// blocks are read as leniently: an image without `mimeType`, a block of a
/// type no revision defines (as its JSON).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_and_results_rmcp_cannot_type_are_read_leniently() {
    let (config, log) = raw_server("lenient");
    let (registry, mounts) = mounted(config).await;
    let mut names = registry.names();
    names.sort_unstable();
    assert!(
        ["raw__any", "raw__hinted", "raw__plain"]
            .iter()
            .all(|name| names.iter().any(|n| n == name)),
        "{names:?}"
    );
    assert!(
        names.iter().all(|n| n != "raw__7" && n.starts_with("raw__")),
        "{names:?}"
    );
    let result = registry.call("raw__plain", json!({})).await;
    assert!(!result.is_error, "{}", result.text());
    assert_eq!(result.content.len(), 2, "{:?}", result.content);
    assert_eq!(result.content[0], Content::text("ok"));
    assert!(
        matches!(&result.content[1], Content::Image { mime_type, data } if mime_type == "image/png" && data == "iVBORw0KGgo="),
        "{:?}",
        result.content
    );
    // A schema of `true` takes any arguments; the server judges them.
    let any = registry.call("raw__any", json!({"x": [1]})).await;
    assert!(!any.is_error, "{}", any.text());
    assert_eq!(log.count("initialize"), 1, "started once");
    mounts.close().await;

    let (config, log) = odd_server("odd");
    let (registry, mounts) = mounted(config).await;
    let result = registry.call("odd__t", json!({})).await;
    assert!(!result.is_error, "{}", result.text());
    assert!(
        result.text().contains("hologram") && result.text().contains("\"frames\":3"),
        "{}",
        result.text()
    );
    assert_eq!(log.lines(), 1, "started once");
    mounts.close().await;
}

/// A tool that runs only as a task (`execution.taskSupport: "required"`)
/// cannot be called here, and is left out; one that may run as a task is
/// mounted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_that_runs_only_as_a_task_is_left_out() {
    let (config, _log) = raw_server("lenient");
    let (registry, mounts) = mounted(config).await;
    assert!(registry.get("raw__task_optional").is_some(), "{:?}", registry.names());
    assert!(registry.get("raw__task_only").is_none(), "{:?}", registry.names());
    mounts.close().await;
}

/// Names that are alike once made provider names (`read.file` and
/// `read_file`, two CJK names of one length) stay apart, and a tool the
/// server lists twice is left out once: the server's tools mount, and each
/// name calls its own remote tool.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn names_alike_once_cleaned_stay_apart_and_a_repeated_tool_is_left_out() {
    let (config, _log) = raw_server("names");
    let (registry, mounts) = mounted(config).await;
    let names = registry.names();
    assert_eq!(names.len(), 5, "{names:?}");
    assert!(
        names.contains(&"raw__read_file".to_owned()),
        "a clean name is kept: {names:?}"
    );
    let mut called = Vec::new();
    for name in &names {
        assert!(
            name.len() <= 64 && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'),
            "{name}"
        );
        let result = registry.call(name, json!({})).await;
        assert!(!result.is_error, "{name}: {}", result.text());
        called.push(result.text());
    }
    called.sort_unstable();
    assert_eq!(called, ["dup", "read.file", "read_file", "写文件", "读文件"]);
    mounts.close().await;
}

/// A listing whose last page names the cursor `""` ends there; an output
/// schema of no object is left out (MCP's describe objects); a `null`
/// member of a union, however it is written, makes the parameter
/// optional and leaves the other member's coercions to the binder.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listed_shapes_are_read_as_the_spec_means_them() {
    let (config, log) = raw_server("shaped");
    let (registry, mounts) = mounted(config).await;
    assert_eq!(
        log.count("tools/list"),
        1,
        "no page after the one naming the cursor \"\""
    );
    let definitions = registry.definitions(Format::Mcp, &Selection::all()).to_json();
    let output = |name: &str| {
        let tool = definitions
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap();
        tool.get("outputSchema").cloned()
    };
    assert_eq!(output("raw__listed"), None);
    assert_eq!(output("raw__counted").map(|s| s["type"].clone()), Some(json!("object")));
    let result = registry.call("raw__maybe", json!({"n": "4", "m": "5", "k": "6"})).await;
    assert!(!result.is_error, "{}", result.text());
    let mut codes = result.warning_codes();
    codes.sort_unstable();
    assert_eq!(
        codes,
        [
            "string_literal_converted_to_integer:k",
            "string_literal_converted_to_integer:m",
            "string_literal_converted_to_integer:n"
        ]
    );
    let anthropic = serde_json::to_string(&registry.definitions(Format::Anthropic, &Selection::all())).unwrap();
    assert!(
        !anthropic.contains("anyOf") && !anthropic.contains("oneOf"),
        "{anthropic}"
    );
    mounts.close().await;
}

/// A server that dies while a call runs may have done the work: the result
/// says so, and not that the call can simply be made again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_dies_during_a_call_says_the_tool_may_have_run() {
    let (config, _log) = raw_server("dies_in_call");
    let (registry, mounts) = mounted(config).await;
    let result = registry.call("raw__t", json!({})).await;
    assert!(result.is_error, "{}", result.text());
    let text = result.text();
    assert!(text.contains("MCP server `raw`"), "{text}");
    assert!(text.contains("may have run"), "{text}");
    assert!(!text.contains("can be made again"), "{text}");
    mounts.close().await;
}

/// Pages of `tools/list` are read only until 1,000 tools are kept: the
/// first 1,000 mount, and no later page is asked for.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listing_stops_once_the_tool_cap_is_reached() {
    let (config, log) = raw_server("paged");
    let (registry, mounts) = mounted(config).await;
    let names = registry.names();
    assert_eq!(names.len(), 1000);
    assert_eq!(names.first().map(String::as_str), Some("raw__t0"));
    assert_eq!(names.last().map(String::as_str), Some("raw__t999"));
    assert_eq!(log.count("tools/list"), 10, "10 pages of 100, not 20");
    mounts.close().await;
}

/// A registry with the Python server mounted as `py`, served over MCP on an
/// in-memory pipe: the mounts, and the client's end of the pipe.
async fn serve_mounted() -> (McpMounts, PipeClient) {
    let config = json!({"mcpServers": {"py": {"command": python(), "args": [server_script(), "stdio"]}}});
    let (registry, mounts) = mount(config).await;
    (mounts, serve(registry))
}

/// `registry`, served over MCP on an in-memory pipe: the client's end.
fn serve(registry: ToolRegistry) -> PipeClient {
    let (ours, theirs) = tokio::io::duplex(1 << 16);
    let (server_read, server_write) = tokio::io::split(theirs);
    tokio::spawn(tool_runtime::mcp::McpServer::new(registry).serve(server_read, server_write));
    let (read, write) = tokio::io::split(ours);
    PipeClient {
        read: tokio::io::BufReader::new(read),
        write,
    }
}

/// The client's end of a pipe a server is served on, one JSON-RPC message
/// a line.
struct PipeClient {
    read: tokio::io::BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>,
    write: tokio::io::WriteHalf<tokio::io::DuplexStream>,
}

impl PipeClient {
    async fn send(&mut self, message: Value) {
        use tokio::io::AsyncWriteExt as _;
        self.write.write_all(format!("{message}\n").as_bytes()).await.unwrap();
    }

    /// The next message from the server (a safety net of 30 s).
    async fn next(&mut self) -> Value {
        use tokio::io::AsyncBufReadExt as _;
        let mut line = String::new();
        let read = tokio::time::timeout(Duration::from_secs(30), self.read.read_line(&mut line)).await;
        assert_ne!(read.expect("an answer within 30 s").unwrap(), 0, "the server closed");
        serde_json::from_str(&line).unwrap()
    }
}

/// A registry that holds mounted tools and is itself served over MCP
/// announces `tools.listChanged`, and tells its client when a mounted
/// server's set changes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_served_registry_passes_a_mounted_server_s_change_on() {
    let (mounts, mut client) = serve_mounted().await;
    client
        .send(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}))
        .await;
    // Sent again, as a confused client might: it is told of a change once.
    for _ in 0..3 {
        client
            .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
    }
    client
        .send(
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "py__grow", "arguments": {}}}),
        )
        .await;
    let mut seen = Vec::new();
    let changed = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            let message = client.next().await;
            if message["method"] == "notifications/tools/list_changed" {
                return;
            }
            seen.push(message);
        }
    })
    .await;
    assert!(changed.is_ok(), "told of the change within 30 s: {seen:?}");
    assert_eq!(
        seen[0]["result"]["capabilities"]["tools"]["listChanged"],
        json!(true),
        "{seen:?}"
    );
    // Whatever else comes before the answer to a ping sent now.
    tokio::time::sleep(Duration::from_millis(300)).await;
    client.send(json!({"jsonrpc": "2.0", "id": 2, "method": "ping"})).await;
    let mut more = Vec::new();
    loop {
        let message = client.next().await;
        if message["id"] == 2 {
            break;
        }
        more.push(message);
    }
    let again = more
        .iter()
        .filter(|m| m["method"] == "notifications/tools/list_changed")
        .count();
    assert_eq!(again, 0, "one change, one notification: {more:?}");
    mounts.close().await;
}

/// From protocol 2026-07-28 on there is no `initialize`: a client hears of
/// changes by `subscriptions/listen`, and each change of a mounted server's
/// tools comes on that subscription, tagged with its id.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_served_registry_passes_a_change_on_to_a_subscription() {
    let (mounts, mut client) = serve_mounted().await;
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"}});
    client
        .send(
            json!({"jsonrpc": "2.0", "id": "sub", "method": "subscriptions/listen", "params": {
            "_meta": meta, "notifications": {"toolsListChanged": true}}}),
        )
        .await;
    let acknowledged = client.next().await;
    assert_eq!(
        acknowledged["method"], "notifications/subscriptions/acknowledged",
        "{acknowledged}"
    );
    assert_eq!(
        acknowledged["params"]["notifications"]["toolsListChanged"], true,
        "{acknowledged}"
    );
    client
        .send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "_meta": meta, "name": "py__grow", "arguments": {}}}))
        .await;
    let mut seen = Vec::new();
    let changed = loop {
        let message = client.next().await;
        if message["method"] == "notifications/tools/list_changed" {
            break message;
        }
        seen.push(message);
    };
    assert_eq!(
        changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "sub",
        "{changed} after {seen:?}"
    );
    mounts.close().await;
}

/// A connection holds at most 16 subscriptions open: one more is refused,
/// and ending one makes room.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_holds_a_bounded_number_of_subscriptions() {
    let (mounts, mut client) = serve_mounted().await;
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"}});
    let listen = |id: String| {
        json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": {
            "_meta": meta, "notifications": {"toolsListChanged": true}}})
    };
    for i in 0..17 {
        client.send(listen(format!("sub{i}"))).await;
    }
    let refused = loop {
        let message = client.next().await;
        if message.get("error").is_some() {
            break message;
        }
    };
    // Which one is refused is the server's choice: they start at once.
    let refused_id = refused["id"].as_str().unwrap().to_owned();
    assert!(refused_id.starts_with("sub"), "{refused}");
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("16 subscriptions"),
        "{refused}"
    );
    // Ending one makes room for another, which hears of the next change.
    let open = if refused_id == "sub0" { "sub1" } else { "sub0" };
    client
        .send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": open}}))
        .await;
    // The first may take a moment to end: until it has, another is refused.
    for attempt in 0..50 {
        let id = format!("again{attempt}");
        client.send(listen(id.clone())).await;
        client
            .send(
                json!({"jsonrpc": "2.0", "id": attempt, "method": "tools/call", "params": {
                "_meta": meta, "name": "py__grow", "arguments": {}}}),
            )
            .await;
        loop {
            let message = client.next().await;
            if message["id"] == id.as_str() && message.get("error").is_some() {
                break;
            }
            let heard = message["method"] == "notifications/tools/list_changed"
                && message["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == id.as_str();
            if heard {
                mounts.close().await;
                return;
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("no subscription was let in after one ended");
}

/// Over streamable HTTP an HTTP failure of one call (a 503 from a proxy, a
/// 500 with an HTML page) is that call's own: the session stays, and a
/// call in flight on it still gets its answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_failure_of_one_call_keeps_the_session_and_the_calls_in_flight() {
    let port = free_port();
    let log = tempfile_path::Path::new("flaky");
    let mut command = Command::new("python3");
    command.arg(root().join("tests/python/mcp_odd_server.py")).args([
        "flaky".to_owned(),
        log.0.display().to_string(),
        port.to_string(),
    ]);
    let server = HttpServer::spawn(command, port, "/mcp");
    let (registry, mounts) = mount(json!({"mcpServers": {"odd": {"type": "http", "url": server.url()}}})).await;

    let napping = registry.call("odd__nap", json!({}));
    let failing_meanwhile = async {
        // The nap has reached the server (a safety net of 30 s).
        for _ in 0..600 {
            if !log.starting("tools/call nap ").is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let unavailable = registry.call("odd__unavailable", json!({})).await;
        let broken = registry.call("odd__broken", json!({})).await;
        (unavailable, broken)
    };
    let (nap, (unavailable, broken)) = tokio::join!(napping, failing_meanwhile);
    assert!(!nap.is_error, "the call in flight got its answer: {}", nap.text());
    assert_eq!(nap.text(), "rested");
    for (failed, status) in [(&unavailable, "503"), (&broken, "500")] {
        let text = failed.text();
        assert!(failed.is_error && text.contains(status), "{text}");
        assert!(
            text.contains("MCP server `odd`") && text.contains("may have run"),
            "{text}"
        );
        assert!(!text.contains("reconnected") && !text.contains("refused"), "{text}");
    }
    let again = registry.call("odd__nap", json!({})).await;
    assert_eq!(again.text(), "rested", "{}", again.text());

    // One session throughout.
    assert_eq!(log.starting("initialize ").len(), 1, "{:?}", log.starting(""));
    let sessions: std::collections::BTreeSet<String> = log
        .starting("")
        .iter()
        .filter(|line| !line.starts_with("initialize "))
        .filter_map(|line| line.rsplit_once(' ').map(|(_, session)| session.to_owned()))
        .collect();
    assert_eq!(sessions.len(), 1, "{:?}", log.starting(""));
    mounts.close().await;
}

/// A stdio server dies with the runtime its connection ran on, even one
/// that ignores `SIGTERM` and outlives the end of its input: once the
/// registry is dropped and the runtime shut down, nothing is left running.
#[test]
fn a_stdio_server_is_killed_when_the_runtime_shuts_down() {
    let (config, _log) = odd_server("stubborn");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let pid = runtime.block_on(async {
        let (registry, _mounts) = mounted(config).await;
        let result = registry.call("odd__t", json!({})).await;
        result.text().parse::<u64>().expect("a pid")
    });
    drop(runtime);
    let gone = gone_within(pid, Duration::from_secs(10));
    if !gone {
        kill_pid(pid);
    }
    assert!(gone, "the server outlived the runtime");
}

/// A next-page cursor is bounded: one longer than 4 KiB ends the listing
/// with a clear error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cursor_longer_than_4_kib_ends_the_listing() {
    let (config, log) = raw_server("long_cursor");
    let error = mount_error(config).await;
    assert!(error.contains("a next-page cursor longer than 4096 bytes"), "{error}");
    assert_eq!(log.count("tools/list"), 1);
}

/// Only an error that says the server refused the call unread (invalid
/// request, unknown method, invalid parameters) is worded as a refusal;
/// any other (an exception inside the tool, which older SDKs send as
/// -32603) says the tool may have run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_a_call_refused_unread_is_reported_as_refused() {
    let (config, _log) = raw_server("call_errors");
    let (registry, mounts) = mounted(config).await;
    let refused = registry.call("raw__invalid", json!({})).await;
    let text = refused.text();
    assert!(refused.is_error, "{text}");
    assert!(
        text.contains("refused") && text.contains("error of invalid") && text.contains("-32602"),
        "{text}"
    );
    assert!(!text.contains("may have run"), "{text}");
    for (tool, code) in [("internal", "-32603"), ("custom", "7")] {
        let failed = registry.call(&format!("raw__{tool}"), json!({})).await;
        let text = failed.text();
        assert!(failed.is_error, "{text}");
        assert!(
            text.contains(&format!("error of {tool}")) && text.contains(&format!("code {code}")),
            "{text}"
        );
        assert!(text.contains("may have run") && !text.contains("refused"), "{text}");
    }
    mounts.close().await;
}

/// A server that announces a change with every `tools/list` answer is not
/// listed back to back: at most once a second. A listing that finds the
/// same tools leaves the registry's set as it is, and the registry's own
/// clients are not told of a change.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_announces_a_change_with_every_listing_is_listed_at_most_once_a_second() {
    let (config, log) = raw_server("relist_announces");
    let (registry, mounts) = mounted(config).await;
    let mut client = serve(registry);
    client
        .send(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}))
        .await;
    client
        .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    // Listed again (the change is not lost), but never back to back: at
    // most one listing a second, whatever the machine's load.
    let started = std::time::Instant::now();
    while log.count("tools/list") < 3 && started.elapsed() < Duration::from_secs(30) {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let (lists, elapsed) = (log.count("tools/list"), started.elapsed().as_secs_f64());
    assert!(lists >= 3, "{lists} listings in {elapsed:.1} s");
    assert!(lists as f64 <= elapsed + 2.0, "{lists} listings in {elapsed:.1} s");
    assert_eq!(mounts.servers()[0].tools, ["raw__t"]);

    client.send(json!({"jsonrpc": "2.0", "id": 1, "method": "ping"})).await;
    let mut seen = Vec::new();
    loop {
        let message = client.next().await;
        if message["id"] == 1 {
            break;
        }
        seen.push(message);
    }
    assert!(
        seen.iter().all(|m| m["method"] != "notifications/tools/list_changed"),
        "the same tools, no change: {seen:?}"
    );
    mounts.close().await;
}

/// The tool of `name` in a listing of `format` (a list of tools).
fn listed_tool(registry: &ToolRegistry, format: Format, name: &str) -> Value {
    let definitions = registry.definitions(format, &Selection::all()).to_json();
    definitions
        .as_array()
        .and_then(|tools| tools.iter().find(|tool| tool["name"] == name))
        .cloned()
        .unwrap_or_else(|| panic!("no {name} in {definitions}"))
}

/// Whether the Anthropic API takes `key` as a property key.
fn is_anthropic_key(key: &str) -> bool {
    (1..=64).contains(&key.len())
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

/// A property key a provider refuses (`$filter`, `file path`, `größe`) is
/// offered under a local key every provider takes, at the top or in an
/// object a parameter takes, and reaches the server under its own; a tool
/// with such a key in a member of a union, where no local key can stand
/// for it, is left out, as every request offering it would be refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn property_keys_no_provider_accepts_get_local_keys() {
    let (config, _log) = raw_server("keys");
    let (registry, mounts) = mounted(config).await;
    let mut names = registry.names();
    names.sort_unstable();
    assert_eq!(names, ["raw__nested", "raw__search", "raw__t"], "the union is left out");

    let search = listed_tool(&registry, Format::Anthropic, "raw__search");
    let properties = search["input_schema"]["properties"].as_object().unwrap();
    assert_eq!(properties.len(), 4, "{search}");
    for key in properties.keys() {
        assert!(is_anthropic_key(key), "{key} in {search}");
    }
    assert_eq!(search["input_schema"]["required"], json!(["file_path"]), "{search}");
    assert!(properties.contains_key("_filter"), "a valid key stays: {search}");
    // The one `$filter` became says so, and is not `_filter`'s.
    let filter = properties
        .iter()
        .find(|(_, schema)| schema["description"].as_str().is_some_and(|d| d.contains("`$filter`")))
        .map(|(key, _)| key.clone())
        .unwrap_or_else(|| panic!("no property names `$filter`: {search}"));
    assert!(filter.starts_with("_filter_"), "{filter}");
    assert!(
        properties[&filter]["description"]
            .as_str()
            .unwrap()
            .starts_with("An OData filter."),
        "{search}"
    );

    let result = registry
        .call(
            "raw__search",
            json!({filter.as_str(): "x", "_filter": "y", "file_path": "a b", "gr__e": "3"}),
        )
        .await;
    assert!(!result.is_error, "{}", result.text());
    let sent: Value = serde_json::from_str(&result.text()).unwrap();
    assert_eq!(
        sent,
        json!({"$filter": "x", "_filter": "y", "file path": "a b", "größe": 3})
    );
    assert_eq!(result.warning_codes(), ["string_literal_converted_to_integer:gr__e"]);
    let missing = registry.call("raw__search", json!({})).await;
    assert_eq!(
        missing.error_codes(),
        ["missing_required:file_path"],
        "{}",
        missing.text()
    );

    let nested = listed_tool(&registry, Format::Anthropic, "raw__nested");
    let properties = &nested["input_schema"]["properties"];
    assert_eq!(
        properties["options"]["properties"]["a_b"]["type"],
        json!("string"),
        "{nested}"
    );
    assert_eq!(properties["rows"]["items"]["required"], json!(["_n"]), "{nested}");
    let result = registry
        .call(
            "raw__nested",
            json!({"options": {"a_b": "x"}, "rows": [{"_n": "3"}, {"_n": 4}]}),
        )
        .await;
    assert!(!result.is_error, "{}", result.text());
    let sent: Value = serde_json::from_str(&result.text()).unwrap();
    assert_eq!(sent, json!({"options": {"a b": "x"}, "rows": [{"$n": 3}, {"$n": 4}]}));
    // The binder checks the local keys inside a parameter too.
    let missing = registry.call("raw__nested", json!({"rows": [{}]})).await;
    assert_eq!(
        missing.error_codes(),
        ["missing_required:rows[0]._n"],
        "{}",
        missing.text()
    );
    mounts.close().await;
}

/// One server cannot fill the model's context: a description longer than
/// 4 KiB (the tool's, or a parameter's) is cut with a marker, and the
/// tools listed past 1 MiB of definitions are left out, the first ones
/// listed kept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_s_definitions_are_bounded_in_total_and_by_description() {
    let (config, _log) = raw_server("bulky");
    let (registry, mounts) = mounted(config).await;

    let described = listed_tool(&registry, Format::Anthropic, "raw__described");
    let cut = |text: &Value| {
        let text = text.as_str().unwrap();
        assert!(text.len() < 4200, "{} bytes", text.len());
        assert!(text.ends_with("bytes left out)"), "{}", &text[text.len() - 40..]);
    };
    cut(&described["description"]);
    cut(&described["input_schema"]["properties"]["x"]["description"]);

    let names = registry.names();
    let kept = names.len() - 1;
    assert!((1..20).contains(&kept), "{names:?}");
    let first: Vec<String> = (0..kept).map(|i| format!("raw__t{i}")).collect();
    assert_eq!(names[1..], first[..], "the first ones listed are kept");
    let total: usize = names
        .iter()
        .map(|name| {
            let tool = listed_tool(&registry, Format::Mcp, name);
            tool["description"].as_str().unwrap().len() + tool["inputSchema"].to_string().len()
        })
        .sum();
    assert!(total <= 1 << 20, "{total} bytes of definitions");
    mounts.close().await;
}

/// A remote output schema is sent on well-formed JSON Schema 2020-12:
/// a `type` no type is called, a `minimum` that is no number and a
/// `required` that is no list are dropped, and so is its `$schema`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_output_schema_is_sent_well_formed() {
    let (config, _log) = raw_server("shaped");
    let (registry, mounts) = mounted(config).await;
    let tool = listed_tool(&registry, Format::Mcp, "raw__malformed");
    let output = &tool["outputSchema"];
    assert_eq!(output["type"], "object", "{tool}");
    assert!(output.get("$schema").is_none(), "{output}");
    if let Err(e) = jsonschema::draft202012::meta::validate(output) {
        panic!("the output schema is not valid 2020-12: {e}: {output}");
    }
    assert_eq!(output["properties"]["n"]["type"], "integer", "{output}");
    mounts.close().await;
}

/// A name stays with the remote tool it was given to: when a server that
/// listed `read.file` (mounted as `raw__read_file`) adds `read_file`, the
/// newcomer gets a name of its own and `raw__read_file` still calls
/// `read.file`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refresh_keeps_the_names_already_given() {
    let (config, _log) = raw_server("grows");
    let (registry, mounts) = mounted(config).await;
    assert_eq!(registry.names(), ["raw__read_file"]);
    assert_eq!(registry.call("raw__read_file", json!({})).await.text(), "read.file");
    // The call made the server add `read_file` and announce it.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while registry.names().len() < 2 {
        assert!(tokio::time::Instant::now() < deadline, "listed again within 30 s");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let names = registry.names();
    assert_eq!(registry.call("raw__read_file", json!({})).await.text(), "read.file");
    let newcomer = names.iter().find(|name| *name != "raw__read_file").unwrap();
    assert!(newcomer.starts_with("raw__read_file_"), "{names:?}");
    assert_eq!(registry.call(newcomer, json!({})).await.text(), "read_file");
    mounts.close().await;
}

/// The process group of process `pid`, from `/proc`.
#[cfg(target_os = "linux")]
fn process_group(pid: u64) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // After the command name in parentheses: state, parent, group.
    let (_, rest) = stat.rsplit_once(')').unwrap();
    rest.split_whitespace().nth(2).unwrap().parse().unwrap()
}

/// A stdio server runs in a process group of its own, so a Ctrl-C at the
/// terminal (which signals the terminal's foreground group) does not stop
/// it with the program; and once its connection is dropped, nothing of
/// that group is left, a process the server started and that ignores the
/// end of its input included.
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stdio_server_has_a_process_group_of_its_own_that_ends_with_it() {
    let (config, _log) = raw_server("forks");
    let (registry, mounts) = mounted(config).await;
    let result = registry.call("raw__t", json!({})).await;
    let pids: Vec<u64> = result.text().split(' ').map(|pid| pid.parse().unwrap()).collect();
    let [server, started] = pids[..] else {
        panic!("two process ids: {}", result.text())
    };
    let group = process_group(server);
    let test_group = process_group(u64::from(std::process::id()));
    let started_group = process_group(started);
    drop(registry);
    drop(mounts);
    let gone = [server, started].map(|pid| gone_within(pid, Duration::from_secs(30)));
    for (pid, gone) in [server, started].iter().zip(gone) {
        if !gone {
            kill_pid(*pid);
        }
    }
    assert_eq!(group, server, "the server leads a group");
    assert_ne!(group, test_group, "not the test's group");
    assert_eq!(started_group, group, "what it starts is in its group");
    assert_eq!(gone, [true, true], "the server, then what it started, are gone");
}
