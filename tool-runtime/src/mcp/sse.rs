//! The legacy HTTP+SSE transport (protocol revision 2024-11-05), client
//! side, for `sse` entries: rmcp has no client for it.
//!
//! The client opens a stream of server-sent events with `GET`. The
//! server's first event, `endpoint`, names the URL (on the same origin) the
//! client posts each of its messages to; the server's messages, answers
//! included, come back as `message` events on the stream. The connection
//! ends with the stream.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;

use axum::body::Bytes;
use futures_util::{Stream, StreamExt as _};
use mcp_reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderValue};
use mcp_reqwest::{Client, Url};
use rmcp::service::{RoleClient, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;

use super::McpError;

/// The largest event read; a larger one ends the connection.
const MAX_EVENT_BYTES: usize = 64 << 20;

/// A connection to a legacy SSE server, as an rmcp transport.
pub(crate) struct SseTransport {
    client: Client,
    headers: HeaderMap,
    /// Where messages are posted, as the `endpoint` event said.
    endpoint: Url,
    /// The server's events; `None` once closed.
    events: Option<Events>,
}

impl SseTransport {
    /// Opens the event stream at `url` and waits for its `endpoint` event.
    /// `headers` go with every request.
    pub(crate) async fn connect(client: Client, url: &str, headers: HeaderMap) -> Result<Self, McpError> {
        let url = Url::parse(url).map_err(|e| McpError::config(format!("the url `{}`: {e}", super::clip(url))))?;
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
        let mut events = Events {
            body: Box::pin(response.bytes_stream()),
            parser: EventParser::default(),
        };
        let endpoint = loop {
            match events.next().await {
                Some(Ok(event)) if event.name == "endpoint" => break event.data,
                Some(Ok(_)) => continue,
                Some(Err(e)) => return Err(e),
                None => return Err(McpError::peer("the event stream ended before its `endpoint` event")),
            }
        };
        let endpoint = url
            .join(endpoint.trim())
            .map_err(|e| McpError::peer(format!("the endpoint `{}` is no URL: {e}", super::clip(&endpoint))))?;
        // The headers (a token, say) go there too.
        if endpoint.origin() != url.origin() {
            return Err(McpError::peer(format!(
                "the endpoint `{}` is on another origin than the event stream",
                super::clip(endpoint.as_str())
            )));
        }
        Ok(SseTransport {
            client,
            headers,
            endpoint,
            events: Some(events),
        })
    }
}

impl Transport<RoleClient> for SseTransport {
    type Error = McpError;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), McpError>> + Send + 'static {
        let body = serde_json::to_vec(&item);
        let request = self
            .client
            .post(self.endpoint.clone())
            .headers(self.headers.clone())
            .header(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        async move {
            let body = body.map_err(McpError::protocol)?;
            let response = request.body(body).send().await.map_err(McpError::protocol)?;
            let status = response.status();
            if !status.is_success() {
                return Err(McpError::peer(format!("a message was refused with HTTP {status}")));
            }
            Ok(())
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
            if event.name != "message" {
                continue;
            }
            match serde_json::from_str(&event.data) {
                Ok(message) => return Some(message),
                Err(error) => tracing::warn!(%error, "an event of the MCP server is no JSON-RPC message; skipped"),
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
    body: Pin<Box<dyn Stream<Item = Result<Bytes, mcp_reqwest::Error>> + Send>>,
    parser: EventParser,
}

impl Events {
    /// The next event; `None` when the stream ends.
    async fn next(&mut self) -> Option<Result<Event, McpError>> {
        loop {
            if let Some(event) = self.parser.ready.pop_front() {
                return Some(Ok(event));
            }
            match self.body.next().await? {
                Ok(chunk) => {
                    if let Err(e) = self.parser.push(&chunk) {
                        return Some(Err(e));
                    }
                }
                Err(e) => return Some(Err(McpError::protocol(e))),
            }
        }
    }
}

/// One server-sent event: its name (`message` unless it says otherwise)
/// and its data lines, joined by newlines.
#[derive(Debug, PartialEq, Eq)]
struct Event {
    name: String,
    data: String,
}

/// Reads server-sent events (the `text/event-stream` format) from chunks
/// of a body, split anywhere.
#[derive(Default)]
struct EventParser {
    /// The start of a line whose end has not come yet.
    line: Vec<u8>,
    /// The event being read: its name, and its data so far.
    name: Option<String>,
    data: Option<String>,
    /// Events read whole, not yet taken.
    ready: VecDeque<Event>,
}

impl EventParser {
    fn push(&mut self, chunk: &[u8]) -> Result<(), McpError> {
        let mut rest = chunk;
        while let Some(end) = rest.iter().position(|b| *b == b'\n') {
            self.line.extend_from_slice(&rest[..end]);
            rest = &rest[end + 1..];
            let line = std::mem::take(&mut self.line);
            self.field(line.strip_suffix(b"\r").unwrap_or(&line));
        }
        self.line.extend_from_slice(rest);
        let pending = self.line.len() + self.data.as_ref().map_or(0, String::len);
        if pending > MAX_EVENT_BYTES {
            return Err(McpError::peer(format!(
                "an event of the stream is larger than {MAX_EVENT_BYTES} bytes"
            )));
        }
        Ok(())
    }

    /// Reads one line: a field, a comment, or the blank line that ends an
    /// event.
    fn field(&mut self, line: &[u8]) {
        if line.is_empty() {
            if let Some(data) = self.data.take() {
                let name = self.name.take().unwrap_or_else(|| "message".to_owned());
                self.ready.push_back(Event { name, data });
            }
            self.name = None;
            return;
        }
        let line = String::from_utf8_lossy(line);
        let (field, value) = line.split_once(':').unwrap_or((&line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        match field {
            "event" => self.name = Some(value.to_owned()),
            "data" => match &mut self.data {
                Some(data) => {
                    data.push('\n');
                    data.push_str(value);
                }
                None => self.data = Some(value.to_owned()),
            },
            // A comment (an empty field name), `id`, `retry` and unknown
            // fields say nothing here.
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(chunks: &[&[u8]]) -> Vec<Event> {
        let mut parser = EventParser::default();
        for chunk in chunks {
            parser.push(chunk).unwrap();
        }
        parser.ready.into_iter().collect()
    }

    #[test]
    fn events_are_read_across_chunks_with_comments_and_crlf() {
        let stream = b": ping\r\nevent: endpoint\r\ndata: /messages/?session_id=1\r\n\r\ndata: {\"a\":\ndata: 1}\n\nid: 3\nevent: other\n\n";
        let expected = [
            Event {
                name: "endpoint".into(),
                data: "/messages/?session_id=1".into(),
            },
            Event {
                name: "message".into(),
                data: "{\"a\":\n1}".into(),
            },
        ];
        assert_eq!(events(&[stream]), expected);
        let split: Vec<&[u8]> = stream.chunks(3).collect();
        assert_eq!(events(&split), expected);
    }

    #[test]
    fn an_endless_line_is_an_error() {
        let mut parser = EventParser::default();
        let chunk = vec![b'x'; 1 << 20];
        let error = (0..100).find_map(|_| parser.push(&chunk).err()).expect("an error");
        assert!(error.to_string().contains("larger than"), "{error}");
    }
}
