//! The parameter order of `tools/list` on the wire. rmcp holds a tool's
//! `inputSchema` as a `serde_json::Map`, which (without serde_json's
//! `preserve_order`, which the runtime never turns on) writes its keys by
//! name: a model would read `case_sensitive` before `pattern`. So the
//! server's outgoing messages pass through here, and a `tools/list` answer
//! is written again with each tool ordered after its definition, as every
//! other format writes it. Any other message passes through untouched.

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Map, Value};

use crate::registry::ToolRegistry;
use crate::schema::Schema;

/// `message` (one JSON-RPC message, as text) with its tools in declaration
/// order when it answers `tools/list`; `None` when it is anything else and
/// goes out as it is.
pub(crate) fn ordered_tools_list(message: &[u8], registry: &ToolRegistry) -> Option<Vec<u8>> {
    // Cheap test first (a substring search, not a parse): almost every
    // message is something else.
    let text = std::str::from_utf8(message).ok()?;
    if !text.contains("\"inputSchema\"") || !text.contains("\"tools\"") {
        return None;
    }
    let Value::Object(mut envelope) = serde_json::from_str::<Value>(text).ok()? else {
        return None;
    };
    let Some(Value::Object(result)) = envelope.get_mut("result") else {
        return None;
    };
    let Some(Value::Array(tools)) = result.remove("tools") else {
        return None;
    };
    let tools: Vec<Schema> = tools
        .into_iter()
        .map(|tool| match tool["name"].as_str().and_then(|name| registry.get(name)) {
            Some(known) => Schema::new(tool, &known.definition().object_shapes()),
            None => Schema::new(tool, &[]),
        })
        .collect();
    serde_json::to_vec(&Envelope {
        envelope: &envelope,
        tools: &tools,
    })
    .ok()
}

/// The JSON-RPC envelope with its `result.tools` written from `tools`.
struct Envelope<'a> {
    envelope: &'a Map<String, Value>,
    tools: &'a [Schema],
}

impl Serialize for Envelope<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.envelope.len()))?;
        for (key, value) in self.envelope {
            match (key.as_str(), value) {
                ("result", Value::Object(result)) => map.serialize_entry(
                    key,
                    &WithTools {
                        result,
                        tools: self.tools,
                    },
                )?,
                _ => map.serialize_entry(key, value)?,
            }
        }
        map.end()
    }
}

/// A `result` object with `tools` first, then its other keys.
struct WithTools<'a> {
    result: &'a Map<String, Value>,
    tools: &'a [Schema],
}

impl Serialize for WithTools<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.result.len() + 1))?;
        map.serialize_entry("tools", self.tools)?;
        for (key, value) in self.result {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

/// Rewrites a stream of newline-separated messages (stdio) or of
/// server-sent events (HTTP) line by line: a line that is a `tools/list`
/// answer, alone or after `data:`, is ordered; every other byte passes
/// through as it came. Bytes wait only for the end of their line.
#[derive(Default)]
pub(crate) struct Lines {
    pending: Vec<u8>,
}

impl Lines {
    /// The complete lines `chunk` ends (with what came before it), ordered.
    pub(crate) fn push(&mut self, chunk: &[u8], registry: &ToolRegistry) -> Vec<u8> {
        let Some(last) = chunk.iter().rposition(|b| *b == b'\n') else {
            self.pending.extend_from_slice(chunk);
            return Vec::new();
        };
        let mut text = std::mem::take(&mut self.pending);
        text.extend_from_slice(&chunk[..=last]);
        self.pending.extend_from_slice(&chunk[last + 1..]);
        let mut out = Vec::with_capacity(text.len());
        for line in text.split_inclusive(|b| *b == b'\n') {
            let (body, end) = line.split_at(line.len() - 1);
            let body = body.strip_suffix(b"\r").unwrap_or(body);
            match ordered_line(body, registry) {
                Some(ordered) => {
                    out.extend_from_slice(&ordered);
                    out.extend_from_slice(&line[body.len()..line.len() - end.len()]);
                    out.extend_from_slice(end);
                }
                None => out.extend_from_slice(line),
            }
        }
        out
    }

    /// What is left when the stream ends: a last line without its newline.
    pub(crate) fn finish(self, registry: &ToolRegistry) -> Vec<u8> {
        ordered_line(&self.pending, registry).unwrap_or(self.pending)
    }
}

fn ordered_line(line: &[u8], registry: &ToolRegistry) -> Option<Vec<u8>> {
    let (prefix, message) = match line.strip_prefix(b"data:") {
        Some(rest) => {
            let spaces = rest.iter().take_while(|b| **b == b' ').count();
            (&line[..5 + spaces], &rest[spaces..])
        }
        None => (&line[..0], line),
    };
    let ordered = ordered_tools_list(message, registry)?;
    let mut out = Vec::with_capacity(prefix.len() + ordered.len());
    out.extend_from_slice(prefix);
    out.extend_from_slice(&ordered);
    Some(out)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::ToolParam;
    use crate::bind::BoundArguments;
    use crate::codes::CallError;
    use crate::context::CallScope;
    use crate::schema::Field;
    use crate::tool::{Tool, ToolDefinition, ToolFuture};

    /// A tool whose parameters are declared out of name order.
    struct Search(ToolDefinition);

    impl Tool for Search {
        fn definition(&self) -> &ToolDefinition {
            &self.0
        }

        fn invoke(&self, _: BoundArguments, _: &CallScope<'_>) -> Result<ToolFuture, Vec<CallError>> {
            unreachable!("only listed")
        }
    }

    fn registry() -> ToolRegistry {
        let fields = ["pattern", "case_sensitive", "max_results"]
            .map(|name| Field::new(name, String::shape(), false, "String"))
            .to_vec();
        let definition = ToolDefinition::new("search", "Search.", fields);
        let mut registry = ToolRegistry::new();
        registry.register(Search(definition)).unwrap();
        registry
    }

    fn listing() -> Vec<u8> {
        // As rmcp writes it: every map by key.
        serde_json::to_vec(&json!({
            "jsonrpc": "2.0",
            "id": 1,
            "result": {"tools": [{"name": "search", "description": "Search.", "inputSchema": {
                "type": "object",
                "properties": {
                    "case_sensitive": {"type": "string"},
                    "max_results": {"type": "string"},
                    "pattern": {"type": "string"}
                },
                "required": ["case_sensitive", "max_results", "pattern"]
            }}]}
        }))
        .unwrap()
    }

    #[test]
    fn a_tools_list_answer_lists_parameters_in_declaration_order() {
        let registry = registry();
        let text = String::from_utf8(ordered_tools_list(&listing(), &registry).unwrap()).unwrap();
        let at = |key: &str| text.find(&format!("\"{key}\":{{")).unwrap();
        assert!(
            at("pattern") < at("case_sensitive") && at("case_sensitive") < at("max_results"),
            "{text}"
        );
        assert!(
            text.contains(r#""required":["pattern","case_sensitive","max_results"]"#),
            "{text}"
        );
        // The same message otherwise.
        let before: Value = serde_json::from_slice(&listing()).unwrap();
        let after: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(before["id"], after["id"]);
        assert_eq!(
            before["result"]["tools"][0]["inputSchema"]["properties"],
            after["result"]["tools"][0]["inputSchema"]["properties"]
        );
    }

    #[test]
    fn lines_split_across_chunks_are_ordered_and_everything_else_kept_byte_for_byte() {
        let registry = registry();
        let mut stream = b"event: message\r\ndata: ".to_vec();
        stream.extend_from_slice(&listing());
        stream.extend_from_slice(b"\r\n\n{\"jsonrpc\":\"2.0\",\"method\":\"ping\"}\n");
        stream.extend_from_slice(&listing());
        let mut lines = Lines::default();
        let mut out = Vec::new();
        for chunk in stream.chunks(7) {
            out.extend(lines.push(chunk, &registry));
        }
        out.extend(lines.finish(&registry));
        let out = String::from_utf8(out).unwrap();
        let parts: Vec<&str> = out.split('\n').collect();
        assert_eq!(parts[0], "event: message\r");
        assert!(parts[1].starts_with("data: {") && parts[1].ends_with("}\r"), "{out}");
        assert_eq!(parts[2], "");
        assert_eq!(parts[3], r#"{"jsonrpc":"2.0","method":"ping"}"#);
        for listed in [&parts[1][6..parts[1].len() - 1], parts[4]] {
            let at = |key: &str| listed.find(&format!("\"{key}\":{{")).unwrap();
            assert!(at("pattern") < at("case_sensitive"), "{listed}");
        }
    }

    #[test]
    fn an_event_keeps_its_data_prefix_and_other_messages_pass_untouched() {
        let registry = registry();
        let mut event = b"data: ".to_vec();
        event.extend_from_slice(&listing());
        let ordered = ordered_line(&event, &registry).unwrap();
        assert!(ordered.starts_with(b"data: {"));
        assert!(ordered_line(br#"{"jsonrpc":"2.0","id":2,"result":{}}"#, &registry).is_none());
        assert!(ordered_line(b"id: 0", &registry).is_none());
        assert!(ordered_line(br#"{"tools": "inputSchema" not json"#, &registry).is_none());
    }
}
