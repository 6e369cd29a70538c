//! OpenAI: Chat Completions (`tool_calls` in, `role: "tool"` messages out)
//! and Responses (`function_call` items in, `function_call_output` items
//! out). Both send arguments as a JSON string, which the registry parses.

use serde_json::{Value, json};

use super::strict::{OPENAI_MOVED, expressible, strict_schema};
use super::{Carried, FormatError, carry, check_call_ids, order_results, text_only};
use crate::call::{CallArguments, ToolCall};
use crate::output::Content;
use crate::result::ToolResult;
use crate::tool::ToolDefinition;

/// Whether the strict variant can be strict for this tool (see
/// [`expressible`]); a tool it cannot keeps its plain definition.
fn strict_for(tool: &ToolDefinition, strict: bool) -> bool {
    strict && expressible(tool.input_schema())
}

fn parameters(tool: &ToolDefinition, strict: bool) -> Value {
    if strict {
        strict_schema(tool.input_schema(), OPENAI_MOVED)
    } else {
        tool.input_schema().clone()
    }
}

/// `{type: "function", function: {name, description, parameters, strict?}}`.
pub(crate) fn chat_definition(tool: &ToolDefinition, strict: bool) -> Value {
    let strict = strict_for(tool, strict);
    let mut function = json!({
        "name": tool.name(),
        "description": tool.description(),
        "parameters": parameters(tool, strict),
    });
    if strict {
        function["strict"] = Value::Bool(true);
    }
    json!({"type": "function", "function": function})
}

/// `{type: "function", name, description, parameters, strict}`.
pub(crate) fn responses_definition(tool: &ToolDefinition, strict: bool) -> Value {
    let strict = strict_for(tool, strict);
    json!({
        "type": "function",
        "name": tool.name(),
        "description": tool.description(),
        "parameters": parameters(tool, strict),
        "strict": strict,
    })
}

/// The `tool_calls` of a Chat Completions assistant message (the message,
/// or a whole completion whose first choice holds it), in order.
pub fn chat_tool_calls(message: &Value) -> Result<Vec<ToolCall>, FormatError> {
    let message = message.pointer("/choices/0/message").unwrap_or(message);
    let Some(tool_calls) = message.get("tool_calls").and_then(Value::as_array) else {
        return Ok(Vec::new());
    };
    let mut calls = Vec::new();
    for call in tool_calls {
        let (Some(id), Some(name)) = (
            call["id"].as_str(),
            call.pointer("/function/name").and_then(Value::as_str),
        ) else {
            return Err(FormatError::new("a tool call lacks its id or function name"));
        };
        calls.push(ToolCall::new(name, raw_arguments(call.pointer("/function/arguments"))).with_id(id));
    }
    check_call_ids(calls.iter().filter_map(|c| c.id.as_deref()))?;
    Ok(calls)
}

/// Arguments as OpenAI sends them: a JSON string, kept as raw text so the
/// binder reports bad JSON as `json_parse_error`.
fn raw_arguments(arguments: Option<&Value>) -> CallArguments {
    match arguments {
        Some(Value::String(text)) => CallArguments::Text(text.clone()),
        Some(other) => CallArguments::Json(other.clone()),
        None => CallArguments::Text(String::new()),
    }
}

/// One `role: "tool"` message per result, in order. Chat tool messages carry
/// text only; an image or document becomes a note saying it is not shown.
pub fn chat_tool_messages(results: &[ToolResult]) -> Vec<Value> {
    results
        .iter()
        .map(|r| {
            json!({
                "role": "tool",
                "tool_call_id": r.call_id.clone().unwrap_or_default(),
                "content": text_only(r),
            })
        })
        .collect()
}

/// The tool messages answering `assistant`'s tool calls one to one, in the
/// order of the calls: a missing, extra or duplicate id is an error.
pub fn chat_reply(assistant: &Value, results: &[ToolResult]) -> Result<Vec<Value>, FormatError> {
    let ids: Vec<String> = chat_tool_calls(assistant)?.into_iter().filter_map(|c| c.id).collect();
    Ok(chat_tool_messages(&order_results(&ids, results)?))
}

/// The `function_call` items of a Responses output (the response object,
/// its `output` array, or any list of input items), in order; the item's
/// `call_id` is the call's id.
pub fn responses_function_calls(response: &Value) -> Result<Vec<ToolCall>, FormatError> {
    let items = response.get("output").unwrap_or(response);
    let Some(items) = items.as_array() else {
        return Err(FormatError::new("the response has no output array"));
    };
    let mut calls = Vec::new();
    for item in items.iter().filter(|i| i["type"] == "function_call") {
        let (Some(id), Some(name)) = (item["call_id"].as_str(), item["name"].as_str()) else {
            return Err(FormatError::new("a function_call item lacks its call_id or name"));
        };
        calls.push(ToolCall::new(name, raw_arguments(item.get("arguments"))).with_id(id));
    }
    check_call_ids(calls.iter().filter_map(|c| c.id.as_deref()))?;
    Ok(calls)
}

/// One `function_call_output` item per result, in order. Text results are a
/// string; results with images or documents are a list of input items.
pub fn responses_outputs(results: &[ToolResult]) -> Vec<Value> {
    results
        .iter()
        .map(|r| {
            let output = if r.content.iter().all(|c| matches!(c, Content::Text { .. })) {
                Value::String(r.text())
            } else {
                Value::Array(r.content.iter().map(response_input_item).collect())
            };
            json!({
                "type": "function_call_output",
                "call_id": r.call_id.clone().unwrap_or_default(),
                "output": output,
            })
        })
        .collect()
}

fn response_input_item(content: &Content) -> Value {
    match carry(content) {
        Carried::Text(text) => json!({"type": "input_text", "text": text}),
        Carried::Note(note) => json!({"type": "input_text", "text": note}),
        Carried::TextDocument { text, .. } => json!({"type": "input_text", "text": text}),
        Carried::Image { data, mime_type } => json!({
            "type": "input_image",
            "image_url": format!("data:{mime_type};base64,{data}"),
            "detail": "auto",
        }),
        Carried::Pdf { data, title } => json!({
            "type": "input_file",
            "file_data": format!("data:application/pdf;base64,{data}"),
            "filename": title.unwrap_or("document.pdf"),
        }),
    }
}

/// The output items answering `response`'s function calls one to one, in
/// the order of the calls.
pub fn responses_reply(response: &Value, results: &[ToolResult]) -> Result<Vec<Value>, FormatError> {
    let ids: Vec<String> = responses_function_calls(response)?
        .into_iter()
        .filter_map(|c| c.id)
        .collect();
    Ok(responses_outputs(&order_results(&ids, results)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chat_arguments_stay_raw_text() {
        let message = json!({"role": "assistant", "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "a", "arguments": "{\"x\": 1}"}},
        ]});
        let calls = chat_tool_calls(&message).unwrap();
        assert_eq!(calls[0].arguments, CallArguments::Text("{\"x\": 1}".into()));
        assert_eq!(calls[0].id.as_deref(), Some("call_1"));
    }

    #[test]
    fn a_message_without_tool_calls_has_none() {
        assert!(
            chat_tool_calls(&json!({"role": "assistant", "content": "hi"}))
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn responses_calls_use_call_id() {
        let response = json!({"output": [
            {"type": "reasoning", "id": "rs_1", "summary": []},
            {"type": "function_call", "id": "fc_1", "call_id": "call_9", "name": "a", "arguments": "{}"},
        ]});
        let calls = responses_function_calls(&response).unwrap();
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].id.as_deref(), Some("call_9"));
    }
}
