//! Plain `fn` bodies that outlive their time limit are bounded and counted
//! (SPEC section 6). Its own test binary: the count is process-wide.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::json;
use tool_runtime::{Outcome, ToolRegistry, tool};

static RELEASED: AtomicBool = AtomicBool::new(false);

/// Block the thread until the test releases it.
#[tool]
fn stuck(#[param(description = "Ignored")] n: u32) -> u32 {
    while !RELEASED.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(1));
    }
    n
}

/// Answer at once.
#[tool]
async fn quick(#[param(description = "Echoed")] n: u32) -> u32 {
    n
}

// Tokio's paused clock does not move while blocking tasks run, so this
// test uses a short real time limit; it asserts counts, never durations.
#[tokio::test]
async fn timed_out_plain_fn_bodies_are_bounded_and_async_tools_keep_being_served() {
    let mut registry = ToolRegistry::new().with_timeout(Some(Duration::from_millis(5)));
    registry.register(Stuck).unwrap().register(Quick).unwrap();
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
    // Async tools are served whatever the count.
    assert_eq!(registry.call("quick", json!({"n": 7})).await.text(), "7");
    // Over MCP too, where every call otherwise runs on a thread of its own.
    let served = mcp_calls(&[("quick", 8), ("stuck", 9)]).await;

    // Released before the assertions: a failed one then ends the test
    // instead of leaving the runtime waiting for stuck threads.
    RELEASED.store(true, Ordering::SeqCst);
    while registry.stray_blocking_calls() > 0 {
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(served[0]["content"][0]["text"], "8", "{}", served[0]);
    assert_eq!(served[1]["isError"], true, "{}", served[1]);
    assert!(
        served[1]["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("still running past their time limit")),
        "{}",
        served[1]
    );
    assert_eq!(registry.call("stuck", json!({"n": 3})).await.text(), "3");
}

/// The results of calling each `(tool, n)` in turn over MCP (stdio framing
/// on an in-memory pipe), from a server of a registry of both tools.
async fn mcp_calls(calls: &[(&str, u32)]) -> Vec<serde_json::Value> {
    use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _};
    let mut registry = ToolRegistry::new();
    registry.register(Stuck).unwrap().register(Quick).unwrap();
    let (ours, theirs) = tokio::io::duplex(1 << 16);
    let (server_read, server_write) = tokio::io::split(theirs);
    tokio::spawn(tool_runtime::mcp::McpServer::new(registry).serve(server_read, server_write));
    let (read, mut write) = tokio::io::split(ours);
    let mut lines = tokio::io::BufReader::new(read).lines();
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}});
    let mut messages = vec![
        initialize,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ];
    for (id, (tool, n)) in calls.iter().enumerate() {
        messages.push(json!({"jsonrpc": "2.0", "id": id + 1, "method": "tools/call",
            "params": {"name": tool, "arguments": {"n": n}}}));
    }
    let mut results = vec![serde_json::Value::Null; calls.len()];
    for message in messages {
        write.write_all(format!("{message}\n").as_bytes()).await.unwrap();
    }
    let mut answered = 0;
    while answered < calls.len() {
        let line = tokio::time::timeout(Duration::from_secs(60), lines.next_line())
            .await
            .expect("the server answers")
            .unwrap()
            .expect("the server stays up");
        let answer: serde_json::Value = serde_json::from_str(&line).unwrap();
        if let Some(id) = answer["id"].as_u64().filter(|&id| id > 0) {
            results[id as usize - 1] = answer["result"].clone();
            answered += 1;
        }
    }
    results
}
