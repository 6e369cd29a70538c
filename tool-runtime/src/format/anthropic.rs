//! The Anthropic Messages API: tool definitions, `tool_use` blocks in, one
//! `role: "user"` message of `tool_result` blocks out.
//!
//! ```
//! # use tool_runtime::format::anthropic;
//! # use tool_runtime::ToolRegistry;
//! # async fn demo(registry: &ToolRegistry, assistant: serde_json::Value) -> Result<(), Box<dyn std::error::Error>> {
//! let calls = anthropic::tool_calls(&assistant)?;
//! let results = registry.call_all(calls).await;
//! let reply = anthropic::reply_with_notice(&results, "12 of 20 tool calls left in this task")?;
//! # Ok(()) }
//! ```

use serde_json::{Map, Value, json};

use super::strict::{ANTHROPIC, expressible, strict_schema};
use super::{Carried, FAILED_WITHOUT_MESSAGE, FormatError, call_id_and_name, carry, check_call_ids, result_ids};
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
        out["input_schema"] = strict_schema(tool.input_schema(), &ANTHROPIC);
        out["strict"] = Value::Bool(true);
    }
    out
}

/// The `tool_use` blocks of an assistant message (the message object, or
/// its `content` array), in order. Ids must be present and distinct. A
/// message whose content is plain text has no calls.
///
/// A message that was cut off (`stop_reason` `max_tokens` or
/// `model_context_window_exceeded`) is read as it is, though its last
/// call's input may be cut short: check the stop reason, and answer such
/// calls as not run (as the agent loop does) rather than running them.
pub fn tool_calls(message: &Value) -> Result<Vec<ToolCall>, FormatError> {
    let content = message.get("content").unwrap_or(message);
    let blocks = match content {
        Value::Array(blocks) => blocks,
        Value::String(_) => return Ok(Vec::new()),
        _ => return Err(FormatError::malformed("the assistant message has no content array")),
    };
    let mut calls = Vec::new();
    for block in blocks.iter().filter(|b| b["type"] == "tool_use") {
        let (id, name) = call_id_and_name(&block["id"], &block["name"], "a tool_use block")?;
        let input = block.get("input").cloned().unwrap_or(Value::Object(Map::new()));
        calls.push(ToolCall::new(name, CallArguments::Json(input)).with_id(id));
    }
    check_call_ids(calls.iter().filter_map(|c| c.id.as_deref()))?;
    Ok(calls)
}

/// One `tool_result` block. The API refuses a text block without text, so
/// a result with nothing to read (a tool that returned `""`) says so in
/// words instead. It refuses any block but text in a failed result ("all
/// content must be type 'text' if 'is_error' is true"), so a failed
/// result's images and documents are written as text: a text document's
/// text inlined, any other block a note saying what it was.
pub(crate) fn tool_result_block(result: &ToolResult) -> Value {
    let mut content: Vec<Value> = if result.is_error {
        result
            .content
            .iter()
            .map(super::block_text)
            .filter(|text| !text.trim().is_empty())
            .map(|text| json!({"type": "text", "text": text}))
            .collect()
    } else {
        result
            .content
            .iter()
            .filter(|c| !matches!(c, Content::Text { text } if text.trim().is_empty()))
            .map(content_block)
            .collect()
    };
    if content.is_empty() {
        let said = if result.is_error {
            FAILED_WITHOUT_MESSAGE
        } else {
            "(the tool returned no output)"
        };
        content.push(json!({"type": "text", "text": said}));
    }
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
    let titled = |mut block: Value, title: Option<std::borrow::Cow<'_, str>>| {
        if let Some(title) = title {
            block["title"] = Value::String(title.into_owned());
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

/// The `role: "user"` message answering one assistant message's tool calls:
/// one `tool_result` block per result, in the order given (the order of the
/// calls, as [`ToolRegistry::call_all`](crate::ToolRegistry::call_all)
/// returns them). Every result needs its call's id, and no id may repeat;
/// a reply of no results is an error (the API refuses an empty message).
pub fn reply(results: &[ToolResult]) -> Result<Value, FormatError> {
    reply_message(results, None)
}

/// [`reply`], with a text block after every result: a status notice (the
/// time, the budget left). The API refuses text before a result, so this is
/// the only place a notice can go. A notice of only whitespace is left out,
/// as the API refuses an empty text block.
pub fn reply_with_notice(results: &[ToolResult], notice: &str) -> Result<Value, FormatError> {
    reply_message(results, Some(notice))
}

fn reply_message(results: &[ToolResult], notice: Option<&str>) -> Result<Value, FormatError> {
    FormatError::check_some_results(results)?;
    result_ids(results)?;
    let mut content: Vec<Value> = results.iter().map(tool_result_block).collect();
    if let Some(notice) = notice.filter(|notice| !notice.trim().is_empty()) {
        content.push(json!({"type": "text", "text": notice}));
    }
    Ok(json!({"role": "user", "content": content}))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::{IntoToolOutput as _, ToolOutput};

    #[test]
    fn a_result_with_nothing_to_read_says_so() {
        // The API refuses `{"type": "text", "text": ""}` in a tool_result.
        for (output, said) in [
            (ToolOutput::text(""), "(the tool returned no output)"),
            (ToolOutput::text(" \n"), "(the tool returned no output)"),
            (ToolOutput::error(""), "(the tool failed without a message)"),
        ] {
            let block = tool_result_block(&ToolResult::new("t", Some("toolu_1".into()), output));
            assert_eq!(block["content"], json!([{"type": "text", "text": said}]), "{block}");
        }
        let mut output = ToolOutput::text("");
        output.content.push(Content::text("kept"));
        let block = tool_result_block(&ToolResult::new("t", Some("toolu_1".into()), output));
        assert_eq!(
            block["content"],
            json!([{"type": "text", "text": "kept"}]),
            "empty blocks beside others are dropped"
        );
    }

    /// The API refuses a failed result holding any block but text ("all
    /// content must be type 'text' if 'is_error' is true"), and the
    /// conversation with it.
    #[test]
    fn a_failed_result_holds_only_text() {
        let mut output = ToolOutput::error("the render failed");
        output.content.extend([
            Content::image(b"\x89PNG", "image/png"),
            Content::document(b"%PDF-1.4", "application/pdf", Some("partial.pdf".into())),
            Content::document(b"line 1\n", "text/plain", Some("log.txt".into())),
            Content::text(""),
        ]);
        let block = tool_result_block(&ToolResult::new("t", Some("toolu_1".into()), output));
        assert_eq!(block["is_error"], true);
        assert_eq!(
            block["content"],
            json!([
                {"type": "text", "text": "the render failed"},
                {"type": "text", "text": "[an image (image/png) that this format cannot show]"},
                {"type": "text", "text": "[a PDF document \"partial.pdf\" that this format cannot show]"},
                {"type": "text", "text": "log.txt:\nline 1\n"},
            ]),
            "{block}"
        );
        // A failure of only an image still says it failed.
        let mut output = ToolOutput::error("");
        output.content = vec![Content::image(b"", "image/png")];
        let block = tool_result_block(&ToolResult::new("t", Some("toolu_1".into()), output));
        assert_eq!(
            block["content"],
            json!([{"type": "text", "text": "[an image (image/png) with no data]"}])
        );
        // A success keeps its image and documents.
        let output = vec![Content::image(b"\x89PNG", "image/png")].into_tool_output();
        let block = tool_result_block(&ToolResult::new("t", Some("toolu_1".into()), output));
        assert_eq!(block["content"][0]["type"], "image");
    }

    /// The API refuses an image of no bytes ("image cannot be empty"), and
    /// a PDF of none is no PDF.
    #[test]
    fn an_empty_image_or_pdf_is_a_note() {
        let output = vec![
            Content::image(b"", "image/png"),
            Content::document(b"", "application/pdf", Some("empty.pdf".into())),
        ]
        .into_tool_output();
        let block = tool_result_block(&ToolResult::new("t", Some("toolu_1".into()), output));
        assert_eq!(
            block["content"],
            json!([
                {"type": "text", "text": "[an image (image/png) with no data]"},
                {"type": "text", "text": "[a PDF document \"empty.pdf\" with no data]"},
            ])
        );
    }

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

    #[test]
    fn a_text_only_turn_has_no_calls() {
        let message = json!({"role": "assistant", "content": "All done."});
        assert!(tool_calls(&message).unwrap().is_empty());
        let error = tool_calls(&json!({"role": "assistant", "content": 7})).unwrap_err();
        assert_eq!(error.kind(), super::super::FormatErrorKind::Malformed);
    }
}
