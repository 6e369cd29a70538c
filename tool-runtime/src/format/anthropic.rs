//! The Anthropic Messages API: tool definitions, `tool_use` blocks in, one
//! `role: "user"` message of `tool_result` blocks out.

use serde_json::{Map, Value, json};

use crate::output::Content;
use crate::registry::{CallArguments, ToolCall};
use crate::result::ToolResult;
use crate::tool::ToolDefinition;

/// `{name, description, input_schema}`.
pub(crate) fn definition(tool: &ToolDefinition) -> Value {
    json!({
        "name": tool.name(),
        "description": tool.description(),
        "input_schema": tool.input_schema(),
    })
}

/// Why a message's tool calls could not be read or answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FormatError(pub String);

impl std::fmt::Display for FormatError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for FormatError {}

/// The `tool_use` blocks of an assistant message (the message object, or
/// its `content` array), in order. Ids must be present and distinct.
pub fn tool_calls(message: &Value) -> Result<Vec<ToolCall>, FormatError> {
    let content = message.get("content").unwrap_or(message);
    let Some(blocks) = content.as_array() else {
        return Err(FormatError("the message has no content array".into()));
    };
    let mut calls: Vec<ToolCall> = Vec::new();
    for block in blocks.iter().filter(|b| b["type"] == "tool_use") {
        let (Some(id), Some(name)) = (block["id"].as_str(), block["name"].as_str()) else {
            return Err(FormatError("a tool_use block lacks its id or name".into()));
        };
        if calls.iter().any(|c| c.id.as_deref() == Some(id)) {
            return Err(FormatError(format!("the tool_use id `{id}` appears twice")));
        }
        let input = block.get("input").cloned().unwrap_or(Value::Object(Map::new()));
        calls.push(ToolCall::new(name, CallArguments::Json(input)).with_id(id));
    }
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
    match content {
        Content::Text { text } => json!({"type": "text", "text": text}),
        Content::Image { data, mime_type } => json!({
            "type": "image",
            "source": {"type": "base64", "media_type": mime_type, "data": data},
        }),
        Content::Document { data, mime_type, title } => {
            let mut block = json!({
                "type": "document",
                "source": {"type": "base64", "media_type": mime_type, "data": data},
            });
            if let Some(title) = title {
                block["title"] = Value::String(title.clone());
            }
            block
        }
    }
}

/// The `role: "user"` message answering an assistant message's tool calls:
/// its `tool_result` blocks first, in the order of `results`, then any
/// `notices` as text blocks (a notice can never come before a result).
pub fn tool_result_message(results: &[ToolResult], notices: &[&str]) -> Value {
    let mut content: Vec<Value> = results.iter().map(tool_result_block).collect();
    content.extend(notices.iter().map(|n| json!({"type": "text", "text": n})));
    json!({"role": "user", "content": content})
}
