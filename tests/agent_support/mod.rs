//! A loopback HTTP/1.1 server that answers like a model API from recorded
//! bodies, and records every request; plus tools and transcript checks the
//! agent tests share.

#![allow(dead_code)]

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;
use tool_runtime::model::{Block, Message, Role};
use tool_runtime::{ToolContext, ToolError, ToolRegistry, tool};

/// One request as the server saw it.
#[derive(Clone, Debug)]
pub struct Recorded {
    pub path: String,
    pub headers: HashMap<String, String>,
    pub raw_body: String,
    pub body: Value,
}

/// A piece of a streamed body.
pub enum Piece {
    /// Bytes written at once.
    Bytes(String),
    /// Note that the server got here (for ordering assertions).
    Mark(&'static str),
    /// Wait until the test says go (bounded, so a broken test still ends).
    WaitFor(Arc<Notify>),
}

/// One answer.
pub enum Reply {
    Json {
        status: u16,
        headers: Vec<(&'static str, String)>,
        body: Value,
    },
    Stream(Vec<Piece>),
    /// A 200 whose body breaks off halfway: the connection closes before
    /// the length it announced.
    Cut(Value),
    /// A stream that breaks off after its pieces: it announces a length
    /// longer than what it sends, so the client sees the body end early
    /// (a connection failure), not a stream that ended.
    StreamCut(Vec<Piece>),
}

impl Reply {
    pub fn ok(body: Value) -> Self {
        Reply::Json {
            status: 200,
            headers: Vec::new(),
            body,
        }
    }

    pub fn status(status: u16, body: Value) -> Self {
        Reply::Json {
            status,
            headers: Vec::new(),
            body,
        }
    }

    pub fn with_header(mut self, name: &'static str, value: &str) -> Self {
        if let Reply::Json { headers, .. } = &mut self {
            headers.push((name, value.to_owned()));
        }
        self
    }

    /// A stream of SSE events (`event`, JSON data) written one by one.
    pub fn sse(events: Vec<(Option<&str>, String)>) -> Self {
        Reply::Stream(
            events
                .into_iter()
                .map(|(name, data)| Piece::Bytes(sse_event(name, &data)))
                .collect(),
        )
    }
}

pub fn sse_event(name: Option<&str>, data: &str) -> String {
    match name {
        Some(name) => format!("event: {name}\ndata: {data}\n\n"),
        None => format!("data: {data}\n\n"),
    }
}

pub struct Server {
    pub url: String,
    requests: Arc<Mutex<Vec<Recorded>>>,
    pub marks: Arc<Mutex<Vec<String>>>,
}

impl Server {
    /// Serves `replies` in order, one a request; the last one repeats when
    /// `repeat_last` (a model that never stops).
    pub async fn start(replies: Vec<Reply>, repeat_last: bool) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let marks = Arc::new(Mutex::new(Vec::new()));
        let replies = Arc::new(Mutex::new(replies.into_iter().collect::<VecDeque<_>>()));
        let (recorded, marked) = (requests.clone(), marks.clone());
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let (replies, recorded, marked) = (replies.clone(), recorded.clone(), marked.clone());
                tokio::spawn(async move {
                    serve(stream, replies, recorded, marked, repeat_last).await;
                });
            }
        });
        Server { url, requests, marks }
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }

    pub fn marks(&self) -> Vec<String> {
        self.marks.lock().unwrap().clone()
    }
}

async fn serve(
    mut stream: TcpStream,
    replies: Arc<Mutex<VecDeque<Reply>>>,
    recorded: Arc<Mutex<Vec<Recorded>>>,
    marks: Arc<Mutex<Vec<String>>>,
    repeat_last: bool,
) {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break end + 4;
        }
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buffer.extend_from_slice(&chunk[..n]),
        }
    };
    let head = String::from_utf8_lossy(&buffer[..head_end]).to_string();
    let mut lines = head.split("\r\n");
    let path = lines
        .next()
        .unwrap_or_default()
        .split(' ')
        .nth(1)
        .unwrap_or_default()
        .to_owned();
    let headers: HashMap<String, String> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let length: usize = headers.get("content-length").and_then(|v| v.parse().ok()).unwrap_or(0);
    while buffer.len() < head_end + length {
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buffer.extend_from_slice(&chunk[..n]),
        }
    }
    let raw_body = String::from_utf8_lossy(&buffer[head_end..head_end + length]).to_string();
    let body = serde_json::from_str(&raw_body).unwrap_or(Value::Null);
    recorded.lock().unwrap().push(Recorded {
        path,
        headers,
        raw_body,
        body,
    });
    let reply = {
        let mut replies = replies.lock().unwrap();
        if repeat_last && replies.len() == 1 {
            match replies.front().unwrap() {
                Reply::Json { status, headers, body } => Reply::Json {
                    status: *status,
                    headers: headers.clone(),
                    body: body.clone(),
                },
                Reply::Cut(body) => Reply::Cut(body.clone()),
                Reply::Stream(pieces) => Reply::Stream(bytes_only(pieces)),
                Reply::StreamCut(pieces) => Reply::StreamCut(bytes_only(pieces)),
            }
        } else {
            replies
                .pop_front()
                .unwrap_or_else(|| Reply::status(500, json!({"error": {"message": "no reply left"}})))
        }
    };
    match reply {
        Reply::Json { status, headers, body } => {
            let body = body.to_string();
            let mut head = format!(
                "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n",
                body.len()
            );
            for (name, value) in headers {
                head.push_str(&format!("{name}: {value}\r\n"));
            }
            head.push_str("\r\n");
            let _ = stream.write_all(head.as_bytes()).await;
            let _ = stream.write_all(body.as_bytes()).await;
        }
        Reply::Cut(body) => {
            let body = body.to_string();
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(head.as_bytes()).await;
            let _ = stream.write_all(&body.as_bytes()[..body.len() / 2]).await;
        }
        Reply::Stream(pieces) => {
            let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n";
            let _ = stream.write_all(head.as_bytes()).await;
            write_pieces(&mut stream, pieces, &marks).await;
        }
        Reply::StreamCut(pieces) => {
            // Far more than the pieces: the body ends before its length.
            let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: 1000000\r\nconnection: close\r\n\r\n";
            let _ = stream.write_all(head.as_bytes()).await;
            write_pieces(&mut stream, pieces, &marks).await;
        }
    }
    let _ = stream.shutdown().await;
}

/// The bytes of `pieces` (marks and waits dropped), for a reply served again.
fn bytes_only(pieces: &[Piece]) -> Vec<Piece> {
    pieces
        .iter()
        .filter_map(|p| match p {
            Piece::Bytes(b) => Some(Piece::Bytes(b.clone())),
            _ => None,
        })
        .collect()
}

/// Writes a stream's pieces one by one, flushing each.
async fn write_pieces(stream: &mut TcpStream, pieces: Vec<Piece>, marks: &Mutex<Vec<String>>) {
    for piece in pieces {
        match piece {
            Piece::Bytes(bytes) => {
                let _ = stream.write_all(bytes.as_bytes()).await;
                let _ = stream.flush().await;
            }
            Piece::Mark(mark) => marks.lock().unwrap().push(mark.to_owned()),
            Piece::WaitFor(notify) => {
                let _ = tokio::time::timeout(std::time::Duration::from_secs(10), notify.notified()).await;
            }
        }
    }
}

// ---- Anthropic bodies, as the Messages API documents them ----

pub fn anthropic_message(content: Value, stop_reason: &str) -> Value {
    json!({
        "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": null,
        "usage": {"input_tokens": 412, "output_tokens": 57, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
    })
}

pub fn anthropic_text(text: &str) -> Value {
    anthropic_message(json!([{"type": "text", "text": text}]), "end_turn")
}

/// `calls` are `(id, name, input)`; a text block comes first.
pub fn anthropic_tool_use(text: &str, calls: &[(&str, &str, Value)]) -> Value {
    let mut content = vec![json!({"type": "text", "text": text})];
    for (id, name, input) in calls {
        content.push(json!({"type": "tool_use", "id": id, "name": name, "input": input}));
    }
    anthropic_message(Value::Array(content), "tool_use")
}

/// The events the streaming API sends for `message`, tool input split in
/// pieces; `between` is put after the block of that index closes.
pub fn anthropic_stream(message: &Value, mut between: HashMap<usize, Vec<Piece>>) -> Reply {
    let mut pieces = Vec::new();
    let mut push = |name: &str, data: Value| pieces.push(Piece::Bytes(sse_event(Some(name), &data.to_string())));
    let mut start = message.clone();
    start["content"] = json!([]);
    start["stop_reason"] = Value::Null;
    start["usage"]["output_tokens"] = json!(1);
    push("message_start", json!({"type": "message_start", "message": start}));
    push("ping", json!({"type": "ping"}));
    let mut out = Vec::new();
    for (index, block) in message["content"].as_array().unwrap().iter().enumerate() {
        let mut push = |name: &str, data: Value| out.push(Piece::Bytes(sse_event(Some(name), &data.to_string())));
        match block["type"].as_str().unwrap() {
            "text" => {
                push(
                    "content_block_start",
                    json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}),
                );
                let text = block["text"].as_str().unwrap();
                let (a, b) = text.split_at(text.len() / 2);
                for piece in [a, b] {
                    push(
                        "content_block_delta",
                        json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": piece}}),
                    );
                }
            }
            "tool_use" => {
                push(
                    "content_block_start",
                    json!({"type": "content_block_start", "index": index, "content_block": {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}}),
                );
                let json = block["input"].to_string();
                let cut = json.len() / 3;
                for piece in ["", &json[..cut], &json[cut..]] {
                    push(
                        "content_block_delta",
                        json!({"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": piece}}),
                    );
                }
            }
            _ => unreachable!(),
        }
        push(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        );
        out.extend(between.remove(&index).unwrap_or_default());
    }
    let mut pieces2 = pieces;
    pieces2.extend(out);
    let mut push = |name: &str, data: Value| pieces2.push(Piece::Bytes(sse_event(Some(name), &data.to_string())));
    push(
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": message["stop_reason"], "stop_sequence": null}, "usage": {"output_tokens": message["usage"]["output_tokens"]}}),
    );
    push("message_stop", json!({"type": "message_stop"}));
    Reply::Stream(pieces2)
}

// ---- OpenAI bodies, as Chat Completions documents them ----

pub fn openai_completion(content: Option<&str>, calls: &[(&str, &str, &str)], finish: &str) -> Value {
    let tool_calls: Vec<Value> = calls
        .iter()
        .map(|(id, name, args)| json!({"id": id, "type": "function", "function": {"name": name, "arguments": args}}))
        .collect();
    let mut message = json!({"role": "assistant", "content": content, "refusal": null});
    if !tool_calls.is_empty() {
        message["tool_calls"] = Value::Array(tool_calls);
    }
    json!({
        "id": "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT",
        "object": "chat.completion",
        "created": 1741569952,
        "model": "gpt-4.1-2025-04-14",
        "choices": [{"index": 0, "message": message, "logprobs": null, "finish_reason": finish}],
        "usage": {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150,
                  "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0}},
        "service_tier": "default"
    })
}

/// The chunks the streaming API sends for such a completion, arguments in pieces.
pub fn openai_stream(content: Option<&str>, calls: &[(&str, &str, &str)], finish: &str) -> Reply {
    let chunk = |delta: Value, finish: Value| {
        json!({"id": "chatcmpl-123", "object": "chat.completion.chunk", "created": 1741569952, "model": "gpt-4.1",
               "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}]})
        .to_string()
    };
    let mut events = vec![(None, chunk(json!({"role": "assistant", "content": ""}), Value::Null))];
    if let Some(text) = content {
        let (a, b) = text.split_at(text.len() / 2);
        for piece in [a, b] {
            events.push((None, chunk(json!({"content": piece}), Value::Null)));
        }
    }
    for (index, (id, name, args)) in calls.iter().enumerate() {
        events.push((None, chunk(json!({"tool_calls": [{"index": index, "id": id, "type": "function", "function": {"name": name, "arguments": ""}}]}), Value::Null)));
        let cut = args.len() / 2;
        for piece in [&args[..cut], &args[cut..]] {
            events.push((
                None,
                chunk(
                    json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}),
                    Value::Null,
                ),
            ));
        }
    }
    events.push((None, chunk(json!({}), json!(finish))));
    events.push((
        None,
        json!({"id": "chatcmpl-123", "object": "chat.completion.chunk", "choices": [],
        "usage": {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150}})
        .to_string(),
    ));
    events.push((None, "[DONE]".to_owned()));
    Reply::sse(
        events
            .into_iter()
            .map(|(n, d): (Option<&str>, String)| (n, d))
            .collect(),
    )
}

/// A server that answers every request with the head of an event stream,
/// then a comment every 50 ms and nothing else, until the client leaves:
/// a stream kept open that never makes progress.
pub async fn trickling_server() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut request = [0u8; 64 << 10];
                let _ = socket.read(&mut request).await;
                let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";
                let mut written = socket.write_all(head.as_bytes()).await;
                while written.is_ok() {
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    written = socket.write_all(b": keep-alive\n\n").await;
                }
            });
        }
    });
    url
}

// ---- Tools ----

/// Adds two integers.
#[tool]
pub async fn add(#[param(description = "First addend")] a: i64, #[param(description = "Second addend")] b: i64) -> i64 {
    a + b
}

/// Greets someone by name.
#[tool]
pub async fn greet(#[param(description = "Who to greet")] name: String) -> String {
    format!("Hello, {name}!")
}

/// Always fails.
#[tool]
pub async fn broken(#[param(description = "Anything")] input: Option<String>) -> Result<String, ToolError> {
    Err(ToolError::new(format!("broken cannot handle {input:?}")))
}

/// Repeats a text: a tool with a defaulted and an optional parameter.
#[tool]
pub async fn repeat(
    #[param(description = "The text")] text: String,
    #[param(description = "How often", default = 2, min = 1)] times: u32,
    #[param(description = "Put between the copies")] separator: Option<String>,
) -> String {
    vec![text; times as usize].join(&separator.unwrap_or_default())
}

/// Waits until the call is cancelled.
#[tool]
pub async fn wait_forever(ctx: ToolContext) -> String {
    ctx.cancellation().cancelled().await;
    "stopped".to_owned()
}

pub fn registry() -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    registry.register(Add).unwrap();
    registry.register(Greet).unwrap();
    registry.register(Broken).unwrap();
    registry.register(WaitForever).unwrap();
    registry
}

/// The transcript rule: each assistant message's tool calls are answered,
/// one to one and in order, by the tool results that open the next user
/// message; text comes only after them; nothing else holds results.
pub fn assert_transcript_valid(transcript: &[Message]) {
    for (i, message) in transcript.iter().enumerate() {
        let calls: Vec<&str> = message.tool_uses().map(|c| c.id.as_str()).collect();
        if message.role == Role::Assistant {
            assert_eq!(
                message.tool_results().count(),
                0,
                "message {i}: an assistant message holds results"
            );
            if calls.is_empty() {
                continue;
            }
            let next = transcript
                .get(i + 1)
                .unwrap_or_else(|| panic!("message {i}: tool calls left unanswered"));
            assert_eq!(next.role, Role::User);
            let answered: Vec<&str> = next.tool_results().map(|r| r.tool_use_id.as_str()).collect();
            assert_eq!(
                answered,
                calls,
                "message {}: results not one to one and in order",
                i + 1
            );
            let first_text = next.content.iter().position(|b| !matches!(b, Block::ToolResult(_)));
            if let Some(first_text) = first_text {
                assert!(
                    next.content[first_text..]
                        .iter()
                        .all(|b| !matches!(b, Block::ToolResult(_))),
                    "message {}: text before a result",
                    i + 1
                );
            }
        } else if i == 0 || transcript[i - 1].tool_uses().count() == 0 {
            assert_eq!(
                message.tool_results().count(),
                0,
                "message {i}: results answering nothing"
            );
        }
    }
}

/// The raw JSON text of a top-level array field of a request body, exactly
/// as sent (for byte-identity checks).
pub fn raw_array(body: &str, key: &str) -> Option<String> {
    let start = body.find(&format!("\"{key}\":["))? + key.len() + 3;
    let mut depth = 0;
    let mut in_string = false;
    let mut escaped = false;
    for (i, c) in body[start..].char_indices() {
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '[' | '{' => depth += 1,
            ']' | '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(body[start..start + i + 1].to_owned());
                }
            }
            _ => {}
        }
    }
    None
}

/// What every request to the Messages API must be: the headers, the same
/// tool bytes every turn, and each `tool_use` answered in the next message,
/// results first and in order, text only after them.
pub fn assert_anthropic_requests(server: &Server, key: &str) {
    let requests = server.requests();
    assert!(!requests.is_empty());
    let first_tools = raw_array(&requests[0].raw_body, "tools");
    assert!(first_tools.is_some(), "the first request has no tools");
    for request in &requests {
        assert_eq!(request.path, "/v1/messages");
        assert_eq!(request.headers["x-api-key"], key);
        assert_eq!(request.headers["anthropic-version"], "2023-06-01");
        assert_eq!(request.headers["content-type"], "application/json");
        assert_eq!(
            raw_array(&request.raw_body, "tools"),
            first_tools,
            "tools changed between turns"
        );
        let messages = request.body["messages"].as_array().unwrap();
        assert_eq!(messages[0]["role"], "user");
        for (i, message) in messages.iter().enumerate() {
            let blocks = message["content"].as_array().unwrap();
            let ids: Vec<&Value> = blocks
                .iter()
                .filter(|b| b["type"] == "tool_use")
                .map(|b| &b["id"])
                .collect();
            if message["role"] != "assistant" || ids.is_empty() {
                continue;
            }
            let answer = messages[i + 1]["content"].as_array().unwrap();
            let answered: Vec<&Value> = answer.iter().take(ids.len()).map(|b| &b["tool_use_id"]).collect();
            assert_eq!(answered, ids, "results not first and in order");
            assert!(answer[..ids.len()].iter().all(|b| b["type"] == "tool_result"));
            assert!(
                answer[ids.len()..].iter().all(|b| b["type"] == "text"),
                "only text after the results"
            );
        }
    }
}

/// The same for Chat Completions: the bearer key, the same tool bytes, and
/// each assistant's `tool_calls` answered by `role: "tool"` messages, in
/// order, before anything else.
pub fn assert_openai_requests(server: &Server, key: &str) {
    let requests = server.requests();
    assert!(!requests.is_empty());
    let first_tools = raw_array(&requests[0].raw_body, "tools");
    assert!(first_tools.is_some(), "the first request has no tools");
    for request in &requests {
        assert_eq!(request.path, "/v1/chat/completions");
        assert_eq!(request.headers["authorization"], format!("Bearer {key}"));
        assert_eq!(
            raw_array(&request.raw_body, "tools"),
            first_tools,
            "tools changed between turns"
        );
        let messages = request.body["messages"].as_array().unwrap();
        for (i, message) in messages.iter().enumerate() {
            let Some(calls) = message["tool_calls"].as_array() else {
                continue;
            };
            let ids: Vec<&Value> = calls.iter().map(|c| &c["id"]).collect();
            let answers = &messages[i + 1..i + 1 + ids.len()];
            assert!(answers.iter().all(|m| m["role"] == "tool"));
            let answered: Vec<&Value> = answers.iter().map(|m| &m["tool_call_id"]).collect();
            assert_eq!(answered, ids, "tool messages not in call order");
        }
    }
}
