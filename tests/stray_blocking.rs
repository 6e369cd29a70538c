//! Plain `fn` bodies that outlive their time limit are bounded and counted
//! (SPEC section 6). Its own test binary: the count is process-wide.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _};
use tool_runtime::mcp::McpServer;
use tool_runtime::{Outcome, ToolRegistry, tool};

static RELEASED: AtomicBool = AtomicBool::new(false);
static PANIC_RELEASED: AtomicBool = AtomicBool::new(false);

/// Block the thread until the test releases it.
#[tool]
fn stuck(#[param(description = "Ignored")] n: u32) -> u32 {
    while !RELEASED.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(1));
    }
    n
}

/// Block the thread until the test releases it, then panic.
#[tool]
fn stuck_then_panic(#[param(description = "Ignored")] n: u32) -> u32 {
    while !PANIC_RELEASED.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(1));
    }
    panic!("gave up on {n}")
}

/// Answer at once.
#[tool]
async fn quick(#[param(description = "Echoed")] n: u32) -> u32 {
    n
}

/// Lets every stuck body end when dropped.
struct ReleaseOnDrop;

impl Drop for ReleaseOnDrop {
    fn drop(&mut self) {
        RELEASED.store(true, Ordering::SeqCst);
        PANIC_RELEASED.store(true, Ordering::SeqCst);
    }
}

/// A line-framed MCP client of a registry served over an in-memory pipe.
struct McpPeer {
    write: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    read: tokio::io::BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>,
    id: u64,
}

impl McpPeer {
    fn start(registry: ToolRegistry) -> McpPeer {
        let (ours, theirs) = tokio::io::duplex(1 << 16);
        let (server_read, server_write) = tokio::io::split(theirs);
        tokio::spawn(McpServer::new(registry).serve(server_read, server_write));
        let (read, write) = tokio::io::split(ours);
        McpPeer {
            write,
            read: tokio::io::BufReader::new(read),
            id: 0,
        }
    }

    /// Sends `message`; the answer to it when it is a request.
    async fn exchange(&mut self, message: Value) -> Option<Value> {
        self.write.write_all(format!("{message}\n").as_bytes()).await.unwrap();
        message.get("id")?;
        let mut line = String::new();
        tokio::time::timeout(Duration::from_secs(60), self.read.read_line(&mut line))
            .await
            .expect("the server answers")
            .unwrap();
        Some(serde_json::from_str(&line).unwrap())
    }

    /// The result of a `tools/call`, after the handshake on the first.
    async fn call(&mut self, name: &str, arguments: Value) -> Value {
        if self.id == 0 {
            self.exchange(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}))
                .await;
            self.exchange(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
                .await;
        }
        self.id += 1;
        let answer = self
            .exchange(json!({"jsonrpc": "2.0", "id": self.id, "method": "tools/call",
                "params": {"name": name, "arguments": arguments}}))
            .await
            .unwrap();
        answer["result"].clone()
    }
}

// Tokio's paused clock does not move while blocking tasks run, so this
// test uses a short real time limit; it asserts counts, never durations.
#[tokio::test]
async fn timed_out_plain_fn_bodies_are_bounded_and_async_tools_keep_being_served() {
    // A failed assertion releases the stuck bodies, which the runtime waits
    // for as it shuts down: the test then fails rather than hangs.
    let _release = ReleaseOnDrop;
    let mut registry = ToolRegistry::new().with_timeout(Some(Duration::from_millis(5)));
    registry
        .register(Stuck)
        .unwrap()
        .register(Quick)
        .unwrap()
        .register(StuckThenPanic)
        .unwrap();
    let mut outcomes = Vec::new();
    for n in 0..520 {
        outcomes.push(registry.call("stuck", json!({ "n": n })).await.outcome());
    }
    let timed_out = outcomes.iter().filter(|o| **o == Outcome::TimedOut).count();
    let refused = outcomes.iter().filter(|o| **o == Outcome::Overloaded).count();
    assert_eq!((timed_out, refused), (64, 456));
    assert_eq!(registry.stray_blocking_calls(), 64);
    let result = registry.call("stuck", json!({"n": 1})).await;
    assert!(
        result.text().contains("still running past their time limit"),
        "{}",
        result.text()
    );
    // Async tools are served whatever the count, over MCP too, where the
    // plain `fn` tool is refused as it is here.
    assert_eq!(registry.call("quick", json!({"n": 7})).await.text(), "7");
    let mut served = ToolRegistry::new().with_timeout(Some(Duration::from_millis(5)));
    served.register(Stuck).unwrap().register(Quick).unwrap();
    let mut peer = McpPeer::start(served);
    let quick = peer.call("quick", json!({"n": 8})).await;
    assert_eq!(quick["isError"], false, "{quick}");
    assert_eq!(quick["content"][0]["text"], "8", "{quick}");
    let stuck = peer.call("stuck", json!({"n": 9})).await;
    assert_eq!(stuck["isError"], true, "{stuck}");
    assert!(
        stuck["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("still running past their time limit"),
        "{stuck}"
    );

    RELEASED.store(true, Ordering::SeqCst);
    let waited = std::time::Instant::now();
    while registry.stray_blocking_calls() > 0 && waited.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(registry.stray_blocking_calls(), 0, "the released bodies ended");
    assert_eq!(registry.call("stuck", json!({"n": 3})).await.text(), "3");

    // A body that panics after its call gave up on it ends all the same.
    let result = registry.call("stuck_then_panic", json!({"n": 4})).await;
    assert_eq!(result.outcome(), Outcome::TimedOut);
    assert_eq!(registry.stray_blocking_calls(), 1);
    PANIC_RELEASED.store(true, Ordering::SeqCst);
    let waited = std::time::Instant::now();
    while registry.stray_blocking_calls() > 0 && waited.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(registry.stray_blocking_calls(), 0, "a body that panicked still counts");
}
