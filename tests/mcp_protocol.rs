//! The MCP server's envelope and limits, spoken to in raw JSON-RPC (stdio
//! framing over an in-memory pipe, and HTTP over a loopback socket).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader, DuplexStream};
use tool_runtime::mcp::{HttpOptions, McpServer};
use tool_runtime::{ToolRegistry, tool};

/// A line-framed JSON-RPC peer talking to a server over a pipe.
struct Peer {
    write: tokio::io::WriteHalf<DuplexStream>,
    read: BufReader<tokio::io::ReadHalf<DuplexStream>>,
}

impl Peer {
    fn start(server: McpServer) -> Peer {
        let (ours, theirs) = tokio::io::duplex(1 << 16);
        let (server_read, server_write) = tokio::io::split(theirs);
        tokio::spawn(server.serve(server_read, server_write));
        let (read, write) = tokio::io::split(ours);
        Peer {
            write,
            read: BufReader::new(read),
        }
    }

    async fn send_raw(&mut self, line: &str) {
        self.write.write_all(line.as_bytes()).await.unwrap();
        self.write.write_all(b"\n").await.unwrap();
    }

    async fn send(&mut self, message: Value) {
        self.send_raw(&message.to_string()).await;
    }

    /// The next message from the server (a safety net of 60 s).
    async fn next(&mut self) -> Value {
        let mut line = String::new();
        tokio::time::timeout(Duration::from_secs(60), self.read.read_line(&mut line))
            .await
            .expect("the server answers")
            .unwrap();
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }

    async fn initialize(&mut self) {
        self.send(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}))
            .await;
        let init = self.next().await;
        assert_eq!(init["result"]["protocolVersion"], "2025-06-18", "{init}");
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
    }
}

/// Echo the text.
#[tool]
async fn echo(#[param(description = "What to echo")] text: String) -> String {
    text
}

fn echo_server() -> McpServer {
    let mut registry = ToolRegistry::new();
    registry.register(Echo).unwrap();
    McpServer::new(registry)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_envelope_rules_hold() {
    let mut peer = Peer::start(echo_server());
    peer.initialize().await;
    // Invalid requests: an error that never carries `"id": null`.
    for raw in [
        r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#,
        r#"{"id":6,"method":"ping"}"#,
        r#"{"jsonrpc":"1.0","id":7,"method":"ping"}"#,
    ] {
        peer.send_raw(raw).await;
        let answer = peer.next().await;
        assert_eq!(answer["error"]["code"], -32600, "{raw} -> {answer}");
        assert!(answer.get("id").is_none_or(|id| !id.is_null()), "{raw} -> {answer}");
    }
    // A response from the client, and a line that is not JSON, get no
    // answer: the next message out answers the ping after them.
    peer.send_raw(r#"{"jsonrpc":"2.0","id":5,"result":{}}"#).await;
    peer.send_raw("not json").await;
    peer.send(json!({"jsonrpc": "2.0", "id": 9, "method": "ping"})).await;
    assert_eq!(peer.next().await, json!({"jsonrpc": "2.0", "id": 9, "result": {}}));
    // An invalid cursor is -32602.
    peer.send(json!({"jsonrpc": "2.0", "id": 10, "method": "tools/list", "params": {"cursor": "nope"}}))
        .await;
    let answer = peer.next().await;
    assert_eq!(
        (answer["id"].clone(), answer["error"]["code"].clone()),
        (json!(10), json!(-32602)),
        "{answer}"
    );
    // So are params of the wrong type for a method rmcp knows, which it
    // hands over as a method it does not.
    peer.send(json!({"jsonrpc": "2.0", "id": 13, "method": "resources/read", "params": {"uri": 5}}))
        .await;
    let answer = peer.next().await;
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert!(
        answer["error"]["message"].as_str().unwrap().contains("resources/read"),
        "{answer}"
    );
    // Unknown tool: -32602; bad arguments: an isError result.
    peer.send(json!({"jsonrpc": "2.0", "id": 11, "method": "tools/call", "params": {"name": "nope"}}))
        .await;
    assert_eq!(peer.next().await["error"]["code"], -32602);
    peer.send(json!({"jsonrpc": "2.0", "id": 12, "method": "tools/call", "params": {"name": "echo", "arguments": {}}}))
        .await;
    let answer = peer.next().await;
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert!(
        answer["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("missing_required:text")
    );
}

/// Notifications and responses a client sends before `initialize` get no
/// answer, as JSON-RPC has it, and do not end the connection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn messages_before_initialize_are_dropped_and_the_server_goes_on() {
    let mut peer = Peer::start(echo_server());
    peer.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    peer.send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3}}))
        .await;
    peer.send(json!({"jsonrpc": "2.0", "id": 7, "result": {}})).await;
    peer.send(json!({"jsonrpc": "2.0", "id": 8, "error": {"code": -1, "message": "no"}}))
        .await;
    peer.send(json!({"jsonrpc": "2.0", "id": "p", "method": "ping"})).await;
    assert_eq!(peer.next().await["id"], "p");
    // A request that starts no session (no protocol metadata) is answered
    // with an error; what follows it is still dropped, not fatal.
    peer.send(json!({"jsonrpc": "2.0", "id": "l", "method": "tools/list"}))
        .await;
    let answer = peer.next().await;
    assert_eq!(answer["id"], "l", "{answer}");
    assert!(answer.get("error").is_some(), "{answer}");
    peer.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    peer.send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "l"}}))
        .await;
    peer.initialize().await;
    peer.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "still here"}}}))
        .await;
    let answer = peer.next().await;
    assert_eq!(answer["id"], 1, "{answer}");
    assert_eq!(answer["result"]["content"][0]["text"], "still here", "{answer}");
}

/// Input that ends before any session started is a client gone, not a
/// server failure.
#[tokio::test]
async fn input_ending_before_initialize_ends_the_server_cleanly() {
    let (ours, theirs) = tokio::io::duplex(1 << 10);
    let (server_read, server_write) = tokio::io::split(theirs);
    let served = tokio::spawn(echo_server().serve(server_read, server_write));
    drop(ours);
    let served = tokio::time::timeout(Duration::from_secs(60), served)
        .await
        .unwrap()
        .unwrap();
    assert!(served.is_ok(), "{served:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_stops_reading_is_read_no_further_and_loses_no_answer() {
    const PINGS: usize = 20_000;
    let mut peer = Peer::start(echo_server());
    peer.initialize().await;
    let Peer { mut write, mut read } = peer;
    let written = Arc::new(AtomicUsize::new(0));
    let writer = tokio::spawn({
        let written = written.clone();
        async move {
            for id in 1..=PINGS {
                let ping = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"ping\"}}\n");
                write.write_all(ping.as_bytes()).await.unwrap();
                written.store(id, Ordering::SeqCst);
            }
            write
        }
    });
    // Nothing is read: the answers back up, and the server stops reading
    // (the writer makes no progress for a second) long before the end.
    let mut last = 0;
    loop {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let now = written.load(Ordering::SeqCst);
        if now == last || now == PINGS {
            break;
        }
        last = now;
    }
    let stalled_at = written.load(Ordering::SeqCst);
    assert!(
        stalled_at < PINGS / 2,
        "the server read {stalled_at} requests nobody read the answers of"
    );
    // Reading again, every request is answered.
    let mut answered = std::collections::HashSet::new();
    while answered.len() < PINGS {
        let mut line = String::new();
        tokio::time::timeout(Duration::from_secs(60), read.read_line(&mut line))
            .await
            .expect("the server answers")
            .unwrap();
        let answer: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(answer["result"], json!({}), "{answer}");
        answered.insert(answer["id"].as_u64().unwrap());
    }
    writer.await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversized_message_is_dropped_and_the_server_goes_on() {
    let mut peer = Peer::start(echo_server().with_max_message_bytes(4096));
    peer.initialize().await;
    // A message of exactly the limit, its line end not counted, is read.
    let call = |text: &str| {
        json!({"jsonrpc": "2.0", "id": 0, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": text}}})
            .to_string()
    };
    let exact = "y".repeat(4096 - call("").len());
    assert_eq!(call(&exact).len(), 4096);
    peer.send_raw(&format!("{}\r", call(&exact))).await;
    let answer = peer.next().await;
    assert_eq!(answer["result"]["content"][0]["text"], exact.as_str(), "{answer}");
    let big = "x".repeat(64 * 1024);
    peer.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": big}}}))
        .await;
    peer.send(json!({"jsonrpc": "2.0", "id": 2, "method": "ping"})).await;
    loop {
        let answer = peer.next().await;
        assert!(
            answer.get("result").is_none() || answer["id"] == 2,
            "the big call must not run: {answer}"
        );
        if answer["id"] == 2 {
            break;
        }
    }
}

static RUNNING: AtomicUsize = AtomicUsize::new(0);
static MOST: AtomicUsize = AtomicUsize::new(0);
static GATE: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(0);

/// Wait at the gate the test opens.
#[tool]
async fn hold() -> String {
    let now = RUNNING.fetch_add(1, Ordering::SeqCst) + 1;
    MOST.fetch_max(now, Ordering::SeqCst);
    drop(GATE.acquire().await);
    RUNNING.fetch_sub(1, Ordering::SeqCst);
    "released".to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_in_flight_and_running_are_bounded() {
    let mut registry = ToolRegistry::new().with_concurrency(2);
    registry.register(Hold).unwrap();
    let mut peer = Peer::start(McpServer::new(registry).with_max_in_flight(4));
    peer.initialize().await;
    for id in 1..=6 {
        peer.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "hold"}}))
            .await;
    }
    // Two of six are refused at once: four are in flight, none can end.
    for _ in 0..2 {
        let answer = peer.next().await;
        assert_eq!(answer["result"]["isError"], true, "{answer}");
        assert!(
            answer["result"]["content"][0]["text"]
                .as_str()
                .unwrap()
                .contains("busy"),
            "{answer}"
        );
    }
    // Two run, two wait for the registry's concurrency limit.
    for _ in 0..600 {
        if RUNNING.load(Ordering::SeqCst) == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(RUNNING.load(Ordering::SeqCst), 2);
    GATE.add_permits(4);
    let mut released = Vec::new();
    for _ in 0..4 {
        let answer = peer.next().await;
        assert_eq!(answer["result"]["content"][0]["text"], "released", "{answer}");
        released.push(answer["id"].as_i64().unwrap());
    }
    released.sort_unstable();
    assert_eq!(released.len(), 4);
    assert_eq!(
        MOST.load(Ordering::SeqCst),
        2,
        "never more than the concurrency limit at once"
    );
}

/// Sends one HTTP/1.1 request and returns the status code.
async fn http_status(addr: std::net::SocketAddr, headers: &[(&str, &str)], body: &str) -> u16 {
    use tokio::io::AsyncReadExt as _;
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        request.push_str(&format!("Host: {addr}\r\n"));
    }
    for (key, value) in headers {
        request.push_str(&format!("{key}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut head = [0u8; 12];
    tokio::time::timeout(Duration::from_secs(60), stream.read_exact(&mut head))
        .await
        .expect("the server answers")
        .unwrap();
    String::from_utf8_lossy(&head[9..12]).parse().unwrap()
}

async fn serve_http(options: HttpOptions) -> std::net::SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(
        echo_server()
            .with_max_message_bytes(4096)
            .serve_http_on(listener, options),
    );
    addr
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_checks_host_origin_token_and_size() {
    let addr = serve_http(HttpOptions::new()).await;
    assert_eq!(http_status(addr, &[], INITIALIZE).await, 200);
    assert_eq!(
        http_status(addr, &[("Origin", &format!("http://{addr}"))], INITIALIZE).await,
        200
    );
    let rebinding = http_status(addr, &[("Host", "evil.example")], INITIALIZE).await;
    assert!(
        (400..500).contains(&rebinding),
        "a foreign Host is refused: {rebinding}"
    );
    let cross_site = http_status(addr, &[("Origin", "https://evil.example")], INITIALIZE).await;
    assert!(
        (400..500).contains(&cross_site),
        "a foreign Origin is refused: {cross_site}"
    );
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "x".repeat(8192)
    );
    assert_eq!(http_status(addr, &[], &big).await, 413);
    // A body that is no JSON-RPC message: 400 with the JSON-RPC error;
    // JSON nested past the parser's depth is still JSON.
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{{"name":"echo","arguments":{{"a":{}{}}}}}}}"#,
        "[".repeat(200),
        "]".repeat(200)
    );
    for (body, code) in [
        ("not json", -32700),
        (r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#, -32600),
        (r#"{"id":3}"#, -32600),
        (deep.as_str(), -32600),
    ] {
        let (head, answer) = http_post(addr, None, body).await;
        assert!(head.starts_with("HTTP/1.1 400"), "{body}: {head}");
        let answer: Value = serde_json::from_str(&answer).unwrap_or_else(|e| panic!("{body}: {e}: {answer}"));
        assert_eq!(answer["error"]["code"], code, "{body}: {answer}");
    }

    let addr = serve_http(HttpOptions::new().bearer_token("s3cret")).await;
    assert_eq!(http_status(addr, &[], INITIALIZE).await, 401);
    assert_eq!(
        http_status(addr, &[("Authorization", "Bearer wrong!")], INITIALIZE).await,
        401
    );
    assert_eq!(
        http_status(addr, &[("Authorization", "Bearer s3cret")], INITIALIZE).await,
        200
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_that_does_not_arrive_in_time_is_refused() {
    use tokio::io::AsyncReadExt as _;
    let addr = serve_http(HttpOptions::new().body_timeout(Duration::from_millis(300))).await;
    // Announces a whole message, sends a tenth of it, and waits.
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n",
        INITIALIZE.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream
        .write_all(&INITIALIZE.as_bytes()[..INITIALIZE.len() / 10])
        .await
        .unwrap();
    let mut status = [0u8; 12];
    tokio::time::timeout(Duration::from_secs(20), stream.read_exact(&mut status))
        .await
        .expect("the server answers without waiting for the rest")
        .unwrap();
    assert_eq!(&status[9..12], b"408");
    // A whole message still goes through.
    assert_eq!(http_status(addr, &[], INITIALIZE).await, 200);
}

#[tokio::test]
async fn http_refuses_a_public_address_unless_hosts_are_named() {
    let listener = tokio::net::TcpListener::bind("0.0.0.0:0").await.unwrap();
    let error = echo_server()
        .serve_http_on(listener, HttpOptions::new())
        .await
        .unwrap_err();
    assert!(error.to_string().contains("not a loopback address"), "{error}");
}

/// Our client mounts our server: over HTTP with a bearer token, and not
/// without it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_client_mounts_our_server_over_http_with_a_token() {
    use tool_runtime::mcp::{McpConfig, McpMounts};
    let addr = serve_http(HttpOptions::new().bearer_token("s3cret")).await;
    let url = format!("http://{addr}/mcp");
    let config =
        json!({"mcpServers": {"echo": {"type": "http", "url": url, "headers": {"Authorization": "Bearer s3cret"}}}});
    let mut registry = ToolRegistry::new();
    let mounts = McpMounts::mount(&mut registry, McpConfig::from_json(&config).unwrap())
        .await
        .expect("mounts with the token");
    assert_eq!(mounts.servers()[0].tools, ["echo__echo"]);
    let result = registry.call("echo__echo", json!({"text": 42})).await;
    assert_eq!(result.text(), "42");
    assert_eq!(
        result.warning_codes(),
        ["scalar_converted_to_string:text"],
        "42 became \"42\" here, with a warning"
    );

    let config = json!({"mcpServers": {"echo": {"type": "http", "url": url}}});
    let error = McpMounts::mount(&mut ToolRegistry::new(), McpConfig::from_json(&config).unwrap())
        .await
        .unwrap_err();
    assert!(error.to_string().contains("server `echo`"), "{error}");
}

/// Compute for a while without ever yielding to the executor.
#[tool]
async fn spin(#[param(description = "How long to compute, in milliseconds")] millis: u64) -> String {
    let start = std::time::Instant::now();
    while start.elapsed() < Duration::from_millis(millis) {
        std::hint::spin_loop();
    }
    format!("computed for {millis} ms")
}

/// Held by each test that counts stray call threads, a count the whole
/// process shares: such tests run one at a time, each once the strays of
/// the one before have ended (a safety net of 30 s).
async fn counting_strays(server: &McpServer) -> tokio::sync::MutexGuard<'static, ()> {
    static COUNTING: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
    let alone = COUNTING.lock().await;
    for _ in 0..600 {
        if server.registry().stray_blocking_calls() == 0 {
            return alone;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("stray call threads of an earlier test never ended");
}

/// The time limit holds for a tool that never yields: the answer comes at
/// about the limit, not when the tool ends, and the thread it holds is
/// counted as a stray until it ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_time_limit_holds_for_a_tool_that_never_yields() {
    let mut registry = ToolRegistry::new()
        .with_timeout(Some(Duration::from_secs(1)))
        .with_max_stray_blocking_calls(1);
    registry.register(Spin).unwrap();
    let server = McpServer::new(registry);
    let _alone = counting_strays(&server).await;
    let mut peer = Peer::start(server.clone());
    peer.initialize().await;
    let start = std::time::Instant::now();
    peer.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "spin", "arguments": {"millis": 6000}}}))
        .await;
    let answer = peer.next().await;
    let waited = start.elapsed();
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("did not finish within"), "{text}");
    assert!(
        waited < Duration::from_secs(4),
        "answered after {waited:?}, the limit is 1 s"
    );
    assert_eq!(
        server.registry().stray_blocking_calls(),
        1,
        "the spinning thread is a stray"
    );
    // At the registry's bound on strays, calls are refused: each needs a
    // thread of the blocking pool.
    peer.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "spin", "arguments": {"millis": 1}}}))
        .await;
    let answer = peer.next().await;
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("still running past their time limit"), "{text}");
    // Once the tool ends, its thread is no stray any more.
    for _ in 0..300 {
        if server.registry().stray_blocking_calls() == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(server.registry().stray_blocking_calls(), 0);
    peer.send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "spin", "arguments": {"millis": 1}}}))
        .await;
    assert_eq!(peer.next().await["result"]["content"][0]["text"], "computed for 1 ms");
}

/// A cancelled call of a tool that never yields gives its place up soon
/// after, not at its time limit: the next call runs while it still spins,
/// and its thread is counted as a stray.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_call_that_never_yields_gives_its_place_up() {
    let mut registry = ToolRegistry::new()
        .with_concurrency(1)
        .with_timeout(Some(Duration::from_secs(60)));
    registry.register(Spin).unwrap();
    registry.register(Echo).unwrap();
    let server = McpServer::new(registry);
    let _alone = counting_strays(&server).await;
    let mut peer = Peer::start(server.clone());
    peer.initialize().await;
    let started = std::time::Instant::now();
    peer.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "spin", "arguments": {"millis": 5000}}}))
        .await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    peer.send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}))
        .await;
    peer.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "in"}}}))
        .await;
    let answer = peer.next().await;
    assert_eq!(answer["id"], 2, "{answer}");
    assert_eq!(answer["result"]["content"][0]["text"], "in", "{answer}");
    // Answered while the cancelled tool still computes: its place was freed.
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "answered after the tool ended"
    );
    assert_eq!(
        server.registry().stray_blocking_calls(),
        1,
        "the spinning thread is a stray"
    );
}

/// The answer a `tools/call` must get: a result (`isError` or not, with a
/// text that contains the given part) or a protocol error code.
type Answer = Result<(bool, &'static str), i64>;

/// `tools/call` requests whose arguments are no JSON object, or a JSON
/// string holding one, with the answer each must get.
fn loose_calls() -> Vec<(Value, Answer)> {
    vec![
        (
            json!({"name": "echo", "arguments": [1, 2]}),
            Ok((true, "arguments_not_object")),
        ),
        (
            json!({"name": "echo", "arguments": 5}),
            Ok((true, "arguments_not_object")),
        ),
        (
            json!({"name": "echo", "arguments": "[1, 2]"}),
            Ok((true, "arguments_not_object")),
        ),
        // A string is arguments encoded twice: one holding no object is
        // no object (SPEC 4).
        (
            json!({"name": "echo", "arguments": "not json"}),
            Ok((true, "arguments_not_object")),
        ),
        (
            json!({"name": "echo", "arguments": "{\"text\":\"twice\"}"}),
            Ok((false, "twice")),
        ),
        (
            json!({"name": "echo", "arguments": null}),
            Ok((true, "missing_required:text")),
        ),
        (json!({"name": "nope", "arguments": [1]}), Err(-32602)),
        (json!({"arguments": {"text": "hi"}}), Err(-32602)),
        (json!({"name": 5, "arguments": {"text": "hi"}}), Err(-32602)),
        (json!({"name": ["echo"], "arguments": [1]}), Err(-32602)),
    ]
}

fn check_loose_answer(params: &Value, expected: &Answer, answer: &Value) {
    match expected {
        Ok((is_error, text)) => {
            assert_eq!(answer["result"]["isError"], *is_error, "{params} -> {answer}");
            // Not on the session's revision, 2025-06-18.
            assert!(answer["result"].get("resultType").is_none(), "{params} -> {answer}");
            let got = answer["result"]["content"][0]["text"].as_str().unwrap_or_default();
            assert!(got.contains(text), "{params} -> {answer}");
        }
        Err(code) => assert_eq!(answer["error"]["code"], *code, "{params} -> {answer}"),
    }
}

/// Arguments that are no JSON object reach the binder, as SPEC section 4
/// says, and come back as results, never as "method not found".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arguments_that_are_no_object_reach_the_binder_over_stdio() {
    let mut peer = Peer::start(echo_server());
    peer.initialize().await;
    for (id, (params, expected)) in loose_calls().iter().enumerate() {
        peer.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}))
            .await;
        let answer = peer.next().await;
        assert_eq!(answer["id"], id, "{answer}");
        check_loose_answer(params, expected, &answer);
    }
    peer.send(json!({"jsonrpc": "2.0", "id": 99, "method": "tools/call"}))
        .await;
    assert_eq!(peer.next().await["error"]["code"], -32602);

    // Protocol 2026-07-28, no session: the result carries `resultType`.
    let mut peer = Peer::start(echo_server());
    peer.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "echo", "arguments": 5, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"}}}}))
        .await;
    let answer = peer.next().await;
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert_eq!(answer["result"]["resultType"], "complete", "{answer}");
}

/// One HTTP/1.1 POST to `/mcp`: the response's headers and body.
async fn http_post(addr: std::net::SocketAddr, session: Option<&str>, body: &str) -> (String, String) {
    use tokio::io::AsyncReadExt as _;
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    if let Some(session) = session {
        request.push_str(&format!("Mcp-Session-Id: {session}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    tokio::time::timeout(Duration::from_secs(60), stream.read_to_string(&mut response))
        .await
        .expect("the server answers")
        .unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    (head.to_owned(), body.to_owned())
}

/// The JSON-RPC message of a response body: JSON, or the `data:` line of an
/// event stream, chunked or not.
fn message_in(body: &str) -> Value {
    body.lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .chain(std::iter::once(body))
        .find_map(|text| {
            serde_json::from_str::<Value>(text.trim())
                .ok()
                .filter(|m| m.get("id").is_some())
        })
        .unwrap_or_else(|| panic!("no JSON-RPC message in {body:?}"))
}

/// Over HTTP, an invalid message's error carries its id when it has one
/// that MCP allows, and otherwise none, never `"id": null` (over stdio,
/// rmcp's error carries no id; `the_envelope_rules_hold`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_errors_of_invalid_messages_never_carry_a_null_id() {
    let addr = serve_http(HttpOptions::new()).await;
    for body in [
        r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
        "[]",
        "garbage",
        r#"{"jsonrpc":"1.0","id":5}"#,
    ] {
        let (head, answer) = http_post(addr, None, body).await;
        assert!(head.starts_with("HTTP/1.1 400"), "{body} -> {head}");
        let answer: Value = serde_json::from_str(&answer).unwrap();
        assert!(answer["error"]["code"].is_i64(), "{body} -> {answer}");
        assert!(answer.get("id").is_none_or(|id| !id.is_null()), "{body} -> {answer}");
    }
    let (_, answer) = http_post(addr, None, r#"{"jsonrpc":"1.0","id":5}"#).await;
    assert_eq!(serde_json::from_str::<Value>(&answer).unwrap()["id"], 5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arguments_that_are_no_object_reach_the_binder_over_http() {
    let addr = serve_http(HttpOptions::new()).await;
    let session = open_session(addr).await;
    for (id, (params, expected)) in loose_calls().iter().enumerate() {
        let request = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
        let (_, body) = http_post(addr, Some(&session), &request.to_string()).await;
        let answer = message_in(&body);
        assert_eq!(answer["id"], id, "{answer}");
        check_loose_answer(params, expected, &answer);
    }
}

/// The authentication scheme is case-insensitive (RFC 7235, section 2.1);
/// the token is not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bearer_scheme_is_read_in_any_case() {
    let addr = serve_http(HttpOptions::new().bearer_token("s3cret")).await;
    for (scheme, space) in [("Bearer", " "), ("bearer", " "), ("BEARER", "  "), ("bEaReR", "   ")] {
        let value = format!("{scheme}{space}s3cret");
        assert_eq!(
            http_status(addr, &[("Authorization", &value)], INITIALIZE).await,
            200,
            "{value}"
        );
    }
    for value in [
        "bearer S3CRET",
        "Basic s3cret",
        "Bearers3cret",
        "Bearer  s3cret!",
        "Bearer s3cre",
        "Bearer ",
        "Bearer",
    ] {
        assert_eq!(
            http_status(addr, &[("Authorization", value)], INITIALIZE).await,
            401,
            "{value}"
        );
    }
    // Our client reads the scheme of a configured header in any case too.
    use tool_runtime::mcp::{McpConfig, McpMounts};
    let url = format!("http://{addr}/mcp");
    let config =
        json!({"mcpServers": {"echo": {"type": "http", "url": url, "headers": {"authorization": "bearer s3cret"}}}});
    let mut registry = ToolRegistry::new();
    McpMounts::mount(&mut registry, McpConfig::from_json(&config).unwrap())
        .await
        .expect("mounts with the token");
    assert_eq!(registry.call("echo__echo", json!({"text": "hi"})).await.text(), "hi");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn limits_too_large_to_count_mean_no_limit() {
    let mut registry = ToolRegistry::new().with_concurrency(usize::MAX);
    registry.register(Echo).unwrap();
    let server = McpServer::new(registry).with_max_in_flight(usize::MAX);
    let mut peer = Peer::start(server);
    peer.initialize().await;
    peer.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "hi"}}}))
        .await;
    let answer = peer.next().await;
    assert_eq!(answer["result"]["content"][0]["text"], "hi", "{answer}");
}

/// Waits until the call is cancelled.
#[tool]
async fn hold_until_cancelled(ctx: tool_runtime::ToolContext) -> String {
    ctx.cancellation().cancelled().await;
    "released".into()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_cancelled_while_it_waits_gives_its_place_up() {
    let mut registry = ToolRegistry::new().with_concurrency(1);
    registry.register(HoldUntilCancelled).unwrap();
    registry.register(Echo).unwrap();
    let mut peer = Peer::start(McpServer::new(registry).with_max_in_flight(2));
    peer.initialize().await;
    let call = |id: u64, name: &str, arguments: Value| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": arguments}});
    let cancel = |id: u64| json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id}});
    // 1 runs; 2 waits for it, then is cancelled; 3 then has a place.
    peer.send(call(1, "hold_until_cancelled", json!({}))).await;
    peer.send(call(2, "hold_until_cancelled", json!({}))).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    peer.send(cancel(2)).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    peer.send(call(3, "echo", json!({"text": "in"}))).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    peer.send(cancel(1)).await;
    loop {
        let answer = peer.next().await;
        if answer["id"] == 3 {
            assert_eq!(answer["result"]["content"][0]["text"], "in", "{answer}");
            break;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_method_is_named_cut_in_its_error() {
    let mut peer = Peer::start(echo_server());
    peer.initialize().await;
    let method = "m".repeat(100_000);
    peer.send(json!({"jsonrpc": "2.0", "id": 1, "method": method})).await;
    let answer = peer.next().await;
    assert_eq!(answer["error"]["code"], -32601, "{answer}");
    assert!(answer.to_string().len() < 1024, "{} bytes", answer.to_string().len());
}

#[tokio::test]
async fn an_empty_host_list_keeps_the_host_check() {
    let addr = serve_http(HttpOptions::new().allow_hosts(Vec::<String>::new())).await;
    assert_eq!(http_status(addr, &[], INITIALIZE).await, 200);
    let rebinding = http_status(addr, &[("Host", "evil.example")], INITIALIZE).await;
    assert!(
        (400..500).contains(&rebinding),
        "a foreign Host is refused: {rebinding}"
    );
}

/// A client that opens sessions in a loop cannot grow the server without
/// limit, nor lock out clients that use theirs: past the cap a new session
/// takes the place of the unused one that waited longest, and is refused
/// with 503 once every open session has been used; the sessions already
/// open keep working, and a place freed by `DELETE` is taken again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_sessions_are_bounded_in_number() {
    // Half the idle time: how long an unused session keeps its place.
    let grace = Duration::from_secs(2);
    let options = HttpOptions::new().max_sessions(2).session_idle_timeout(grace * 2);
    let addr = serve_http(options).await;
    let ping = |id: u32| format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
    let unused = session_in(&http_post(addr, None, INITIALIZE).await.0);
    let second = session_in(&http_post(addr, None, INITIALIZE).await.0);
    assert_ne!(unused, second);
    let (_, body) = http_post(addr, Some(&second), &ping(1)).await;
    assert_eq!(message_in(&body)["id"], 1, "{body}");
    // A client between its `initialize` and its first request keeps its
    // place.
    assert_eq!(
        http_status(addr, &[], INITIALIZE).await,
        503,
        "a fresh session keeps its place"
    );

    // Full: once quiet a while, the session never used makes room.
    tokio::time::sleep(grace + Duration::from_millis(200)).await;
    let (_, body) = http_post(addr, Some(&second), &ping(4)).await;
    assert_eq!(message_in(&body)["id"], 4, "{body}");
    let third = session_in(&http_post(addr, None, INITIALIZE).await.0);
    let status = http_status(addr, &[("Mcp-Session-Id", &unused)], &ping(2)).await;
    assert_eq!(status, 404, "the unused session made room");
    let (_, body) = http_post(addr, Some(&third), &ping(3)).await;
    assert_eq!(message_in(&body)["id"], 3, "{body}");

    // Every open session used: a new one is refused, and the open ones go on.
    assert_eq!(
        http_status(addr, &[], INITIALIZE).await,
        503,
        "a session past the cap is refused when all are in use"
    );
    // A request that opens no session is not refused for want of one.
    let sessionless = http_status(addr, &[], &ping(8)).await;
    assert_ne!(sessionless, 503, "only an initialize asks for a session");
    let (_, body) = http_post(addr, Some(&second), &ping(7)).await;
    assert_eq!(message_in(&body)["id"], 7, "{body}");
    let first = third;

    // Ending one frees its place; ending it again finds no session.
    let delete_from = |id: String, origin: &'static str| async move {
        use tokio::io::AsyncReadExt as _;
        let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        let delete = format!(
            "DELETE /mcp HTTP/1.1\r\nHost: {addr}\r\n{origin}Mcp-Session-Id: {id}\r\nConnection: close\r\n\r\n"
        );
        stream.write_all(delete.as_bytes()).await.unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).await.unwrap();
        response
    };
    let delete = |id: String| delete_from(id, "");
    let response = delete(first.clone()).await;
    assert!(response.starts_with("HTTP/1.1 2"), "{response}");
    assert_eq!(
        http_status(addr, &[], INITIALIZE).await,
        200,
        "the freed place is taken again"
    );
    let response = delete(first.clone()).await;
    assert!(
        response.starts_with("HTTP/1.1 404"),
        "an ended session is not found: {response}"
    );
    // A foreign origin is refused before anything is said of the session.
    let response = delete_from(first, "Origin: https://evil.example\r\n").await;
    assert!(response.starts_with("HTTP/1.1 403"), "{response}");
}

#[tokio::test]
async fn a_cloned_server_is_configured_on_its_own() {
    let first = echo_server().with_info("first", "1.0");
    let second = first.clone().with_info("second", "2.0").with_max_in_flight(8);
    for (server, name) in [(first, "first"), (second, "second")] {
        let mut peer = Peer::start(server);
        peer.send(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}))
            .await;
        let init = peer.next().await;
        assert_eq!(init["result"]["serverInfo"]["name"], name, "{init}");
    }
}

/// Serves `server` over HTTP on a loopback port with `options`.
async fn serve_http_with(server: McpServer, options: HttpOptions) -> std::net::SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(server.serve_http_on(listener, options));
    addr
}

/// The session id in a response's headers.
fn session_in(head: &str) -> String {
    head.lines()
        .find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.eq_ignore_ascii_case("mcp-session-id")
                .then(|| value.trim().to_owned())
        })
        .unwrap_or_else(|| panic!("no session id in {head}"))
}

/// Opens a session (`initialize`, then `notifications/initialized`) and
/// returns its id.
async fn open_session(addr: std::net::SocketAddr) -> String {
    let (head, _) = http_post(addr, None, INITIALIZE).await;
    let session = session_in(&head);
    initialized(addr, &session).await;
    session
}

/// Sends `notifications/initialized` in `session`.
async fn initialized(addr: std::net::SocketAddr, session: &str) {
    http_post(
        addr,
        Some(session),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    )
    .await;
}

/// The body of a chunked HTTP/1.1 response, de-chunked (a body that is not
/// chunked is returned as it is).
fn dechunk(head: &str, body: &str) -> String {
    let chunked = head
        .lines()
        .any(|line| line.to_ascii_lowercase().starts_with("transfer-encoding:") && line.contains("chunked"));
    if !chunked {
        return body.to_owned();
    }
    let (mut out, mut rest) = (String::new(), body);
    while let Some((size, after)) = rest.split_once("\r\n") {
        let size = usize::from_str_radix(size.split(';').next().unwrap().trim(), 16)
            .unwrap_or_else(|e| panic!("a chunk size ({e}): {size:?}"));
        if size == 0 {
            break;
        }
        out.push_str(&after[..size]);
        rest = after[size..].strip_prefix("\r\n").unwrap_or(&after[size..]);
    }
    out
}

/// The events of an event stream, each its lines.
fn events(stream: &str) -> Vec<Vec<String>> {
    stream
        .replace("\r\n", "\n")
        .split("\n\n")
        .filter(|event| !event.trim().is_empty())
        .map(|event| event.lines().map(str::to_owned).collect())
        .collect()
}

/// rmcp's "priming" event (an id, a `retry` and empty data, SEP-1699)
/// breaks clients older than protocol 2025-11-25, which read the empty data
/// as a message: the first event of every response stream is the message.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_event_streams_start_with_the_message() {
    let addr = serve_http(HttpOptions::new()).await;
    let (head, body) = http_post(addr, None, INITIALIZE).await;
    assert!(head.to_ascii_lowercase().contains("text/event-stream"), "{head}");
    let session = session_in(&head);
    initialized(addr, &session).await;
    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}"#;
    let (call_head, call_body) = http_post(addr, Some(&session), call).await;
    for (id, head, body) in [(1, &head, &body), (2, &call_head, &call_body)] {
        let events = events(&dechunk(head, body));
        let first = events.first().unwrap_or_else(|| panic!("no event in {body:?}"));
        let data: Vec<&str> = first.iter().filter_map(|line| line.strip_prefix("data:")).collect();
        assert!(
            first.iter().all(|line| !line.starts_with("retry:")),
            "no retry hint: {first:?}"
        );
        let message: Value = serde_json::from_str(data.concat().trim())
            .unwrap_or_else(|e| panic!("the first event carries no message ({e}): {first:?}"));
        assert_eq!(message["id"], id, "{message}");
    }
}

/// Sleep for a while, then say so.
#[tool]
async fn sleep_for(#[param(description = "How long, in milliseconds")] millis: u64) -> String {
    tokio::time::sleep(Duration::from_millis(millis)).await;
    format!("slept {millis} ms")
}

/// Opens the session's `GET` event stream and returns the connection once
/// the response's headers are read.
async fn open_event_stream(addr: std::net::SocketAddr, session: &str) -> tokio::net::TcpStream {
    use tokio::io::AsyncReadExt as _;
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request =
        format!("GET /mcp HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\nMcp-Session-Id: {session}\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        let mut byte = [0u8; 1];
        let read = tokio::time::timeout(Duration::from_secs(20), stream.read(&mut byte))
            .await
            .expect("the server answers the GET")
            .unwrap();
        assert_eq!(read, 1, "the GET stream closed: {}", String::from_utf8_lossy(&head));
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head);
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    stream
}

/// A session ends once idle for the configured time, and its place is free
/// again; a session whose call runs longer than that, or whose client
/// listens on its `GET` stream, is not idle.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_http_session_ends_but_not_while_it_is_in_use() {
    let idle = Duration::from_millis(300);
    let mut registry = ToolRegistry::new();
    registry.register(SleepFor).unwrap();
    let options = HttpOptions::new().max_sessions(2).session_idle_timeout(idle);
    let addr = serve_http_with(McpServer::new(registry), options).await;
    let ping = |id: u32| format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);

    // A call five times longer than the idle time gets its answer.
    let first = open_session(addr).await;
    let call =
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sleep_for","arguments":{"millis":1500}}}"#;
    let (head, body) = http_post(addr, Some(&first), call).await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert_eq!(
        message_in(&body)["result"]["content"][0]["text"],
        "slept 1500 ms",
        "{body}"
    );

    // A session whose client listens on its GET stream lives on.
    let second = open_session(addr).await;
    let listening = open_event_stream(addr, &second).await;
    tokio::time::sleep(idle * 4).await;
    let (head, body) = http_post(addr, Some(&second), &ping(2)).await;
    assert!(
        head.starts_with("HTTP/1.1 200"),
        "the listened-to session lives: {head}"
    );
    assert_eq!(message_in(&body)["id"], 2, "{body}");

    // The first, idle since its call ended, is gone, and its place is free.
    let (head, _) = http_post(addr, Some(&first), &ping(3)).await;
    assert!(head.starts_with("HTTP/1.1 404"), "the idle session ended: {head}");
    // A third fits in the place it left (two at most are open).
    open_session(addr).await;

    // Once the GET stream closes, the second is idle too. (Each look is a
    // request that uses the session, so the looks are further apart than
    // the idle time and the reaper's period together.)
    drop(listening);
    let mut ended = false;
    for _ in 0..50 {
        tokio::time::sleep(idle * 2).await;
        if http_status(addr, &[("Mcp-Session-Id", &second)], &ping(4)).await == 404 {
            ended = true;
            break;
        }
    }
    assert!(ended, "the session ended once its stream closed");
}

/// A structured result (for a tool with an output schema).
#[derive(serde::Serialize, serde::Deserialize, tool_runtime::ToolParam)]
struct Listing {
    /// The names.
    names: Vec<String>,
}

/// List that many names.
#[tool]
async fn list_names(#[param(description = "How many")] count: u32) -> Listing {
    Listing {
        names: (0..count).map(|i| format!("name number {i}")).collect(),
    }
}

/// The output limit bounds the whole answer: structured content longer than
/// it is left out (the result is then an error, which the output schema
/// does not bind), not sent whole beside the cut text.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn structured_content_over_the_output_limit_is_left_out() {
    let mut registry = ToolRegistry::new().with_max_output_bytes(Some(1024));
    registry.register(ListNames).unwrap();
    let mut peer = Peer::start(McpServer::new(registry));
    peer.initialize().await;
    let call = |id: u32, count: u32| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "list_names", "arguments": {"count": count}}});

    peer.send(call(1, 3)).await;
    let answer = peer.next().await;
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    assert_eq!(
        answer["result"]["structuredContent"]["names"][2], "name number 2",
        "{answer}"
    );

    peer.send(call(2, 50_000)).await;
    let answer = peer.next().await;
    let size = answer.to_string().len();
    assert!(size < 4096, "the answer is bounded: {size} bytes");
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert!(answer["result"].get("structuredContent").is_none(), "{answer}");
    let content = answer["result"]["content"].as_array().unwrap();
    assert!(
        content[0]["text"].as_str().unwrap().contains("[output cut here"),
        "{answer}"
    );
    let last = content.last().unwrap()["text"].as_str().unwrap();
    assert!(last.contains("structured result was left out"), "{last}");
}

/// Reads from `stream` until the server closes it (or 20 s pass): what it
/// sent before.
async fn read_until_closed(stream: &mut tokio::net::TcpStream) -> Result<Vec<u8>, tokio::time::error::Elapsed> {
    use tokio::io::AsyncReadExt as _;
    let mut got = Vec::new();
    tokio::time::timeout(Duration::from_secs(20), async {
        let mut buffer = [0u8; 1024];
        // A reset counts as closed too.
        while let Ok(read @ 1..) = stream.read(&mut buffer).await {
            got.extend_from_slice(&buffer[..read]);
        }
    })
    .await?;
    Ok(got)
}

/// A client that trickles its headers (a "slowloris"), or keeps a
/// connection open without sending a request, is cut off after the header
/// time limit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_or_idle_connection_is_closed() {
    let addr = serve_http(HttpOptions::new().header_timeout(Duration::from_millis(500))).await;

    // One header line every 100 ms, for ever.
    let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (mut read, mut write) = stream.into_split();
    let trickle = tokio::spawn(async move {
        write
            .write_all(format!("POST /mcp HTTP/1.1\r\nHost: {addr}\r\n").as_bytes())
            .await?;
        for i in 0.. {
            tokio::time::sleep(Duration::from_millis(100)).await;
            write.write_all(format!("X-Slow-{i}: a\r\n").as_bytes()).await?;
        }
        Ok::<(), std::io::Error>(())
    });
    let closed = tokio::time::timeout(Duration::from_secs(20), async {
        use tokio::io::AsyncReadExt as _;
        let mut got = Vec::new();
        let mut buffer = [0u8; 1024];
        while let Ok(read @ 1..) = read.read(&mut buffer).await {
            got.extend_from_slice(&buffer[..read]);
        }
        got
    })
    .await
    .expect("the server closes a connection whose headers trickle");
    trickle.abort();
    let got = String::from_utf8_lossy(&closed);
    assert!(!got.starts_with("HTTP/1.1 2"), "{got}");

    // A kept-alive connection that sends no next request is closed too.
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream
        .write_all(format!("GET /elsewhere HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let got = read_until_closed(&mut stream)
        .await
        .expect("the server closes an idle kept-alive connection");
    let got = String::from_utf8_lossy(&got);
    assert!(got.starts_with("HTTP/1.1 404"), "{got}");

    // A connection that sends nothing at all is closed too.
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    read_until_closed(&mut stream)
        .await
        .expect("the server closes a silent connection");
}

/// At most so many connections are open at once: another waits until one
/// closes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_are_bounded_in_number() {
    use tokio::io::AsyncReadExt as _;
    let addr = serve_http(HttpOptions::new().max_connections(1)).await;
    let holding = tokio::net::TcpStream::connect(addr).await.unwrap();
    // Let the server take it.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut waiting = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request = format!("GET /elsewhere HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    waiting.write_all(request.as_bytes()).await.unwrap();
    let mut head = [0u8; 12];
    assert!(
        tokio::time::timeout(Duration::from_millis(500), waiting.read_exact(&mut head))
            .await
            .is_err(),
        "the second connection waits"
    );
    drop(holding);
    tokio::time::timeout(Duration::from_secs(20), waiting.read_exact(&mut head))
        .await
        .expect("the second connection is served once the first closes")
        .unwrap();
    assert_eq!(&head[9..12], b"404");
}

/// Dropping the server's future stops it: a client's event stream ends,
/// and no new connection is served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_http_server_stops_it() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let serving = tokio::spawn(echo_server().serve_http_on(listener, HttpOptions::new()));
    let session = open_session(addr).await;
    let mut listening = open_event_stream(addr, &session).await;
    serving.abort();
    read_until_closed(&mut listening)
        .await
        .expect("the event stream ends with the server");
    assert!(
        tokio::net::TcpStream::connect(addr).await.is_err(),
        "the listener is closed"
    );
}

static AWAITED_STARTED: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(0);
static AWAITED_GATE: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(0);

/// Say it started, then wait for the test to let it end.
#[tool]
async fn awaited() -> String {
    AWAITED_STARTED.add_permits(1);
    AWAITED_GATE.acquire().await.unwrap().forget();
    "let go".to_owned()
}

/// Serves `tool` over HTTP, opens a session and posts `call` in it; once
/// the tool said it started (on `started`): the server, the session and
/// the post, whose answer is the call's.
async fn running_in_a_session(
    tool: impl tool_runtime::Tool,
    call: &'static str,
    started: &tokio::sync::Semaphore,
) -> (std::net::SocketAddr, String, tokio::task::JoinHandle<(String, String)>) {
    let mut registry = ToolRegistry::new();
    registry.register(tool).unwrap();
    let addr = serve_http_with(McpServer::new(registry), HttpOptions::new()).await;
    let session = open_session(addr).await;
    let first = tokio::spawn({
        let session = session.clone();
        async move { http_post(addr, Some(&session), call).await }
    });
    started.acquire().await.unwrap().forget();
    (addr, session, first)
}

/// A request posted with the id of one still running in its session is
/// refused with `-32600` and its id: rmcp would answer the second in the
/// first one's place, and leave the first one's stream open for ever.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_id_still_running_in_its_session_is_refused() {
    let call = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"awaited","arguments":{}}}"#;
    let (addr, session, first) = running_in_a_session(Awaited, call, &AWAITED_STARTED).await;
    let (head, body) = http_post(addr, Some(&session), call).await;
    assert!(head.starts_with("HTTP/1.1 400"), "{head}");
    let refused = message_in(&body);
    assert_eq!(
        (refused["id"].clone(), refused["error"]["code"].clone()),
        (json!(7), json!(-32600)),
        "{body}"
    );
    // A forbidden origin learns nothing of the session: 403 first.
    let forged = http_status(
        addr,
        &[("Mcp-Session-Id", &session), ("Origin", "https://evil.example")],
        call,
    )
    .await;
    assert_eq!(forged, 403);
    AWAITED_GATE.add_permits(1);
    let (head, body) = first.await.unwrap();
    let answer = message_in(&dechunk(&head, &body));
    assert_eq!(answer["id"], 7, "{answer}");
    assert_eq!(answer["result"]["content"][0]["text"], "let go", "{answer}");
    // Once it ended, the id may be used again.
    AWAITED_GATE.add_permits(1);
    let (head, body) = http_post(addr, Some(&session), call).await;
    let answer = message_in(&dechunk(&head, &body));
    assert_eq!(answer["result"]["content"][0]["text"], "let go", "{answer}");
}

static HELD_STARTED: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(0);

/// Say it started, then hold until cancelled.
#[tool]
async fn held(ctx: tool_runtime::ToolContext) -> String {
    HELD_STARTED.add_permits(1);
    ctx.cancellation().cancelled().await;
    "cancelled".to_owned()
}

/// A request the client cancels is never answered (MCP), so its id would
/// stay "running" for the session's life: the cancellation releases it,
/// and a session that cancels many calls keeps none of their ids.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_request_releases_its_id() {
    let call = r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"held","arguments":{}}}"#;
    let (addr, session, first) = running_in_a_session(Held, call, &HELD_STARTED).await;
    let cancel = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":8,"reason":"user"}}"#;
    let (head, _) = http_post(addr, Some(&session), cancel).await;
    assert!(head.starts_with("HTTP/1.1 202"), "{head}");
    // The cancelled call's stream gets no answer; its client lets it go.
    first.abort();
    let ping = r#"{"jsonrpc":"2.0","id":8,"method":"ping"}"#;
    // Not at once: until the cancelled call's handler has surely ended,
    // another request of its id would be sent that call's answer.
    let (head, body) = http_post(addr, Some(&session), ping).await;
    assert!(head.starts_with("HTTP/1.1 400"), "{head}\n{body}");
    assert!(body.contains("still running"), "{body}");
    // Two seconds on (the call's second to end, and one more), it is free.
    tokio::time::sleep(Duration::from_millis(2_100)).await;
    let (head, body) = http_post(addr, Some(&session), ping).await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}\n{body}");
    assert_eq!(message_in(&dechunk(&head, &body))["id"], 8, "{body}");
}
