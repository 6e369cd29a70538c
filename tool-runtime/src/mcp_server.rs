//! An MCP server for a [`ToolRegistry`]: JSON-RPC 2.0, one message a line,
//! over stdin and stdout or any other byte stream (feature `mcp-server`).
//!
//! It speaks the `initialize` handshake (protocol revisions 2024-11-05 to
//! 2025-11-25) and serves `tools/list` and `tools/call`, plus `ping`.
//! Requests are handled concurrently, so a slow tool does not hold up a
//! `ping` or another call; responses go out as they finish, each with its
//! request's id.
//!
//! ```no_run
//! use tool_runtime::mcp_server::McpServer;
//! # fn registry() -> tool_runtime::ToolRegistry { tool_runtime::ToolRegistry::new() }
//!
//! #[tokio::main]
//! async fn main() -> std::io::Result<()> {
//!     McpServer::new(registry()).with_info("my-tools", "1.0.0").serve_stdio().await
//! }
//! ```
//!
//! Invalid arguments are a tool result with `isError: true` that lists every
//! problem (the model can correct them); an unknown tool is a JSON-RPC error,
//! as the protocol asks.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;

use futures_util::StreamExt as _;
use futures_util::stream::FuturesUnordered;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncRead, AsyncWrite, AsyncWriteExt as _, BufReader};

use crate::context::Cancellation;
use crate::format::{Format, Selection, mcp};
use crate::registry::ToolRegistry;
use crate::result::Outcome;

/// Protocol revisions of the `initialize` handshake, newest first.
pub const PROTOCOL_VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// JSON-RPC error codes.
const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const METHOD_NOT_FOUND: i64 = -32601;
const INVALID_PARAMS: i64 = -32602;

/// Serves a registry's tools over MCP.
pub struct McpServer {
    registry: ToolRegistry,
    selection: Selection,
    name: String,
    version: String,
    instructions: Option<String>,
    /// The signals of calls in flight, by request id, for
    /// `notifications/cancelled`.
    in_flight: Mutex<HashMap<String, Cancellation>>,
}

impl McpServer {
    /// A server of every tool in `registry`, named after this crate.
    pub fn new(registry: ToolRegistry) -> Self {
        McpServer {
            registry,
            selection: Selection::all(),
            name: env!("CARGO_PKG_NAME").to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            instructions: None,
            in_flight: Mutex::default(),
        }
    }

    /// The name and version the server gives clients.
    pub fn with_info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.name = name.into();
        self.version = version.into();
        self
    }

    /// Offers only the tools `selection` takes (the others cannot be called).
    pub fn with_selection(mut self, selection: Selection) -> Self {
        self.selection = selection;
        self
    }

    /// Instructions the client may show the model.
    pub fn with_instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// The registry served.
    pub fn registry(&self) -> &ToolRegistry {
        &self.registry
    }

    /// Serves on this process's stdin and stdout until stdin closes. Write
    /// any logging to stderr: stdout carries the protocol.
    pub async fn serve_stdio(&self) -> std::io::Result<()> {
        self.serve(tokio::io::stdin(), tokio::io::stdout()).await
    }

    /// Serves one connection until `reader` ends, answering on `writer`.
    pub async fn serve<R, W>(&self, reader: R, mut writer: W) -> std::io::Result<()>
    where
        R: AsyncRead + Unpin,
        W: AsyncWrite + Unpin,
    {
        let mut reader = BufReader::new(reader);
        let mut line = Vec::new();
        let mut pending: FuturesUnordered<Pin<Box<dyn Future<Output = Option<Value>> + '_>>> = FuturesUnordered::new();
        let mut reading = true;
        loop {
            tokio::select! {
                read = reader.read_until(b'\n', &mut line), if reading => {
                    if read? == 0 {
                        reading = false;
                    } else if !line.trim_ascii().is_empty() {
                        pending.push(Box::pin(self.handle_line(std::mem::take(&mut line))));
                    }
                    line.clear();
                }
                Some(response) = pending.next(), if !pending.is_empty() => {
                    if let Some(response) = response {
                        let mut text = response.to_string();
                        text.push('\n');
                        writer.write_all(text.as_bytes()).await?;
                        writer.flush().await?;
                    }
                }
                else => break,
            }
        }
        Ok(())
    }

    async fn handle_line(&self, line: Vec<u8>) -> Option<Value> {
        match serde_json::from_slice::<Value>(&line) {
            // A batch (protocol 2025-03-26): an array of responses.
            Ok(Value::Array(batch)) if !batch.is_empty() => {
                let mut responses = Vec::new();
                for message in &batch {
                    responses.extend(self.handle(message).await);
                }
                (!responses.is_empty()).then_some(Value::Array(responses))
            }
            Ok(message) => self.handle(&message).await,
            Err(e) => Some(error(
                Value::Null,
                PARSE_ERROR,
                &format!("the message is not JSON: {e}"),
            )),
        }
    }

    /// Answers one JSON-RPC message: a response for a request, `None` for a
    /// notification or a response from the client.
    pub async fn handle(&self, message: &Value) -> Option<Value> {
        let Some(object) = message.as_object() else {
            return Some(error(Value::Null, INVALID_REQUEST, "a message must be one JSON object"));
        };
        let id = object.get("id").cloned();
        let Some(method) = object.get("method").and_then(Value::as_str) else {
            // A response to a request of ours (we send none), or garbage.
            return id.map(|id| error(id, INVALID_REQUEST, "a request needs a method"));
        };
        let params = object.get("params").cloned().unwrap_or(Value::Null);
        // Notifications (no id) get no answer: `notifications/initialized`,
        // `notifications/cancelled`, and any the server does not know.
        let Some(id) = id else {
            if method == "notifications/cancelled"
                && let Some(signal) = self.lock_in_flight().get(&params["requestId"].to_string())
            {
                signal.cancel();
            }
            return None;
        };
        let outcome = match method {
            "initialize" => Ok(self.initialize(&params)),
            "ping" => Ok(json!({})),
            "tools/list" => Ok(json!({ "tools": self.registry.definitions(Format::Mcp, &self.selection) })),
            "tools/call" => match self.call(&id, &params).await {
                // A cancelled request gets no response.
                Ok(None) => return None,
                Ok(Some(result)) => Ok(result),
                Err(e) => Err(e),
            },
            other => Err((METHOD_NOT_FOUND, format!("the method `{other}` is not served here"))),
        };
        Some(match outcome {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err((code, message)) => error(id, code, &message),
        })
    }

    fn initialize(&self, params: &Value) -> Value {
        let asked = params["protocolVersion"].as_str().unwrap_or_default();
        let version = PROTOCOL_VERSIONS
            .iter()
            .find(|v| **v == asked)
            .unwrap_or(&PROTOCOL_VERSIONS[0]);
        let mut result = json!({
            "protocolVersion": version,
            "capabilities": {"tools": {"listChanged": false}},
            "serverInfo": {"name": self.name, "version": self.version},
        });
        if let Some(instructions) = &self.instructions {
            result["instructions"] = Value::String(instructions.clone());
        }
        result
    }

    async fn call(&self, id: &Value, params: &Value) -> Result<Option<Value>, (i64, String)> {
        let call = mcp::tool_call(params).map_err(|e| (INVALID_PARAMS, e.to_string()))?;
        let offered = self
            .registry
            .get(&call.name)
            .is_some_and(|tool| self.selection.includes(tool.definition()));
        if !offered {
            return Err((INVALID_PARAMS, format!("Unknown tool: {}", call.name)));
        }
        let key = id.to_string();
        let signal = Cancellation::new();
        self.lock_in_flight().insert(key.clone(), signal.clone());
        let result = self.registry.call_cancellable(call, &signal).await;
        self.lock_in_flight().remove(&key);
        if result.outcome() == Outcome::Cancelled {
            return Ok(None);
        }
        Ok(Some(mcp::reply(&result)))
    }

    fn lock_in_flight(&self) -> std::sync::MutexGuard<'_, HashMap<String, Cancellation>> {
        // A panic while the lock is held leaves the map as it was.
        self.in_flight.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

fn error(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn requests_get_answers_and_notifications_none() {
        let server = McpServer::new(ToolRegistry::new()).with_info("t", "0");
        let init = server
            .handle(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}}))
            .await
            .unwrap();
        assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
        assert_eq!(init["result"]["serverInfo"]["name"], "t");
        let unknown_version = server
            .handle(&json!({"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {"protocolVersion": "1999-01-01"}}))
            .await
            .unwrap();
        assert_eq!(unknown_version["result"]["protocolVersion"], PROTOCOL_VERSIONS[0]);
        assert!(
            server
                .handle(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
                .await
                .is_none()
        );
        let missing = server
            .handle(&json!({"jsonrpc": "2.0", "id": 3, "method": "resources/list"}))
            .await
            .unwrap();
        assert_eq!(missing["error"]["code"], METHOD_NOT_FOUND);
        let unknown_tool = server
            .handle(&json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "nope"}}))
            .await
            .unwrap();
        assert_eq!(unknown_tool["error"]["code"], INVALID_PARAMS);
    }

    #[tokio::test]
    async fn serve_answers_each_line_and_reports_bad_json() {
        let server = McpServer::new(ToolRegistry::new());
        let input = b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}\n\nnot json\n\xff\xfe\n[{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"ping\"}]\n";
        let mut output = Vec::new();
        server.serve(&input[..], &mut output).await.unwrap();
        let lines: Vec<Value> = String::from_utf8(output)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 4, "{lines:?}");
        assert!(lines.contains(&json!({"jsonrpc": "2.0", "id": 7, "result": {}})));
        assert_eq!(
            lines.iter().filter(|l| l["error"]["code"] == PARSE_ERROR).count(),
            2,
            "bad JSON and bad UTF-8"
        );
        assert!(
            lines.contains(&json!([{"jsonrpc": "2.0", "id": 8, "result": {}}])),
            "a batch is answered in kind"
        );
    }
}
