//! The Anthropic Messages API: tool definitions, `tool_use` blocks in, one
//! `role: "user"` message of `tool_result` blocks out.
//!
//! ```
//! # use tool_runtime::format::anthropic;
//! # use tool_runtime::ToolRegistry;
//! # async fn demo(registry: &ToolRegistry, assistant: serde_json::Value) -> Result<(), Box<dyn std::error::Error>> {
//! let calls = anthropic::tool_calls(&assistant)?;
//! let results = registry.call_all(calls).await;
//! let reply = anthropic::ToolResultMessage::new(results)
//!     .notice("12 of 20 tool calls left in this task")
//!     .to_json();
//! # Ok(()) }
//! ```

use serde_json::{Map, Value, json};

use super::strict::{ANTHROPIC_MOVED, expressible, strict_schema};
use super::{Carried, FormatError, carry, check_call_ids, order_results};
use crate::call::{CallArguments, ToolCall};
use crate::output::Content;
use crate::result::ToolResult;
use crate::tool::ToolDefinition;

/// `{name, description, input_schema}`, plus `strict: true` and a strict
/// schema for the strict variant (when strict mode can express the schema;
/// see [`expressible`]).
pub(crate) fn definition(tool: &ToolDefinition, strict: bool) -> Value {
    let mut out = json!({
        "name": tool.name(),
        "description": tool.description(),
        "input_schema": tool.input_schema(),
    });
    if strict && expressible(tool.input_schema()) {
        out["input_schema"] = strict_schema(tool.input_schema(), ANTHROPIC_MOVED);
        out["strict"] = Value::Bool(true);
    }
    out
}

/// The `tool_use` blocks of an assistant message (the message object, or
/// its `content` array), in order. Ids must be present and distinct.
pub fn tool_calls(message: &Value) -> Result<Vec<ToolCall>, FormatError> {
    let content = message.get("content").unwrap_or(message);
    let Some(blocks) = content.as_array() else {
        return Err(FormatError::new("the assistant message has no content array"));
    };
    let mut calls = Vec::new();
    for block in blocks.iter().filter(|b| b["type"] == "tool_use") {
        let (Some(id), Some(name)) = (block["id"].as_str(), block["name"].as_str()) else {
            return Err(FormatError::new("a tool_use block lacks its id or name"));
        };
        let input = block.get("input").cloned().unwrap_or(Value::Object(Map::new()));
        calls.push(ToolCall::new(name, CallArguments::Json(input)).with_id(id));
    }
    check_call_ids(calls.iter().filter_map(|c| c.id.as_deref()))?;
    Ok(calls)
}

/// One `tool_result` block.
pub fn tool_result_block(result: &ToolResult) -> Value {
    let content: Vec<Value> = result.content.iter().map(content_block).collect();
    let mut block = json!({
        "type": "tool_result",
        "tool_use_id": result.call_id.clone().unwrap_or_default(),
        "content": content,
    });
    if result.is_error {
        block["is_error"] = Value::Bool(true);
    }
    block
}

fn content_block(content: &Content) -> Value {
    let titled = |mut block: Value, title: Option<&str>| {
        if let Some(title) = title {
            block["title"] = Value::String(title.to_owned());
        }
        block
    };
    match carry(content) {
        Carried::Text(text) => json!({"type": "text", "text": text}),
        Carried::Note(note) => json!({"type": "text", "text": note}),
        Carried::Image { data, mime_type } => json!({
            "type": "image",
            "source": {"type": "base64", "media_type": mime_type, "data": data},
        }),
        Carried::Pdf { data, title } => titled(
            json!({"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": data}}),
            title,
        ),
        Carried::TextDocument { text, title } => titled(
            json!({"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": text}}),
            title,
        ),
    }
}

/// The `role: "user"` message answering one assistant message's tool calls.
///
/// Its `tool_result` blocks come first, in the order of the results, and
/// status notices (time, remaining budget) only after them: the builder has
/// no way to put text before a result, which the API would reject.
#[derive(Clone, Debug)]
pub struct ToolResultMessage {
    results: Vec<ToolResult>,
    notices: Vec<String>,
}

impl ToolResultMessage {
    /// A message of these results, in this order.
    pub fn new(results: Vec<ToolResult>) -> Self {
        ToolResultMessage {
            results,
            notices: Vec::new(),
        }
    }

    /// The results reordered to answer `assistant`'s `tool_use` blocks one
    /// to one: a missing, extra or duplicate id is an error.
    pub fn answering(assistant: &Value, results: Vec<ToolResult>) -> Result<Self, FormatError> {
        let ids: Vec<String> = tool_calls(assistant)?.into_iter().filter_map(|c| c.id).collect();
        Ok(Self::new(order_results(&ids, &results)?))
    }

    /// Appends a text notice after every result.
    pub fn notice(mut self, text: impl Into<String>) -> Self {
        self.notices.push(text.into());
        self
    }

    /// The message as the Messages API takes it.
    pub fn to_json(&self) -> Value {
        let mut content: Vec<Value> = self.results.iter().map(tool_result_block).collect();
        content.extend(self.notices.iter().map(|n| json!({"type": "text", "text": n})));
        json!({"role": "user", "content": content})
    }
}

/// Shorthand for [`ToolResultMessage`] with these notices.
pub fn tool_result_message(results: &[ToolResult], notices: &[&str]) -> Value {
    notices
        .iter()
        .fold(ToolResultMessage::new(results.to_vec()), |m, n| m.notice(*n))
        .to_json()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_use_blocks_become_calls_in_order() {
        let message = json!({"role": "assistant", "content": [
            {"type": "text", "text": "Looking."},
            {"type": "tool_use", "id": "toolu_1", "name": "a", "input": {"x": 1}},
            {"type": "tool_use", "id": "toolu_2", "name": "b", "input": {}},
        ]});
        let calls = tool_calls(&message).unwrap();
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[0].id.as_deref(), Some("toolu_1"));
        assert_eq!(calls[0].arguments, CallArguments::Json(json!({"x": 1})));
        assert_eq!(calls[1].name, "b");
    }

    #[test]
    fn duplicate_ids_are_an_error() {
        let message = json!({"content": [
            {"type": "tool_use", "id": "t", "name": "a", "input": {}},
            {"type": "tool_use", "id": "t", "name": "b", "input": {}},
        ]});
        assert!(
            tool_calls(&message)
                .unwrap_err()
                .to_string()
                .contains("`t` appears twice")
        );
    }
}
