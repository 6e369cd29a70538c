//! MCP (Model Context Protocol): `tools/list` entries, `tools/call`
//! requests in, `CallToolResult` out.

use std::borrow::Cow;

use serde_json::{Map, Value, json};

use super::{FormatError, tool_name};
use crate::call::{CallArguments, ToolCall};
use crate::output::Content;
use crate::result::ToolResult;
use crate::text::clip;
use crate::tool::ToolDefinition;

/// `{name, title?, description, inputSchema, outputSchema?, annotations?}`.
pub(crate) fn tool(tool: &ToolDefinition) -> Value {
    let mut out = json!({
        "name": tool.name(),
        "description": tool.description(),
        "inputSchema": tool.input_schema(),
    });
    let annotations = tool.annotations();
    if let Some(title) = &annotations.title {
        out["title"] = Value::String(title.clone());
    }
    if let Some(schema) = tool.output_schema() {
        out["outputSchema"] = schema.as_value().clone();
    }
    if !annotations.is_empty() {
        let mut hints = Map::new();
        let mut put = |key: &str, value: Option<Value>| {
            if let Some(v) = value {
                hints.insert(key.into(), v);
            }
        };
        put("title", annotations.title.clone().map(Value::String));
        put("readOnlyHint", annotations.read_only.map(Value::Bool));
        put("destructiveHint", annotations.destructive.map(Value::Bool));
        put("idempotentHint", annotations.idempotent.map(Value::Bool));
        put("openWorldHint", annotations.open_world.map(Value::Bool));
        out["annotations"] = Value::Object(hints);
    }
    out
}

/// The call of a `tools/call` request's `params` (`{name, arguments?}`).
pub fn tool_call(params: &Value) -> Result<ToolCall, FormatError> {
    let Some(name) = tool_name(&params["name"]) else {
        return Err(FormatError::malformed("tools/call params lack the tool name"));
    };
    let arguments = params.get("arguments").cloned().unwrap_or(Value::Object(Map::new()));
    Ok(ToolCall::new(name, CallArguments::Json(arguments)))
}

/// A `CallToolResult`: `{content, isError, structuredContent?}`.
/// Structured content is included when the result is a JSON object, as MCP
/// requires, unless its JSON is longer than the registry's output limit
/// (the text is cut to it, the structured content never is): then, so that
/// the answer stays bounded, it is left out and the result is an `isError`
/// one (which MCP exempts from the tool's `outputSchema`) that carries the
/// text and a last block saying so. So is a structured result that does
/// not fit its `outputSchema`: a float that is not finite, which serde
/// writes as `null` where the schema wants a number.
pub fn reply(result: &ToolResult) -> Value {
    let mut content: Vec<Value> = result.content.iter().map(content_block).collect();
    let mut is_error = result.is_error;
    let structured = match &result.structured_content {
        Some(Value::Object(_)) if result.structured_too_long() => {
            content.push(json!({"type": "text", "text": STRUCTURED_LEFT_OUT}));
            is_error = true;
            None
        }
        Some(Value::Object(_)) if let Some(path) = result.null_refused_at() => {
            let text = format!(
                "[The structured result was left out: `{}` is null where its output schema wants a value \
                 (a number that is not finite is written as null). The text above is all of the answer.]",
                clip(path)
            );
            content.push(json!({"type": "text", "text": text}));
            is_error = true;
            None
        }
        Some(structured @ Value::Object(_)) => Some(structured.clone()),
        _ => None,
    };
    let mut out = json!({"content": content, "isError": is_error});
    if let Some(structured) = structured {
        out["structuredContent"] = structured;
    }
    out
}

/// The block that ends a result whose structured content was left out.
const STRUCTURED_LEFT_OUT: &str = "[The structured result was left out: its JSON is longer than the output limit. \
     The text above is all of the answer, and may be cut.]";

fn content_block(content: &Content) -> Value {
    match content {
        Content::Text { text } => json!({"type": "text", "text": text}),
        Content::Image { data, mime_type } => json!({"type": "image", "data": data, "mimeType": mime_type}),
        Content::Document { data, mime_type, title } => {
            // A title can be anything a server sent (a `data:` URI): cut
            // as any name is.
            let name = title.as_deref().map_or(Cow::Borrowed("document"), clip);
            json!({
                "type": "resource",
                "resource": {"uri": format!("document:///{}", uri_safe(&name)), "mimeType": mime_type, "blob": data},
            })
        }
    }
}

fn uri_safe(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-._~".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}
