//! OpenAI: Chat Completions (`tool_calls` in, `role: "tool"` messages out)
//! and Responses (`function_call` items in, `function_call_output` items
//! out). Both send arguments as a JSON string, which the registry parses.

use std::collections::HashSet;

use serde_json::{Value, json};

use super::strict::{OPENAI, expressible, strict_schema, within_openai_limits};
use super::{
    Carried, FAILED_WITHOUT_MESSAGE, FormatError, call_id_and_name, carry, check_call_ids, check_only_first_has_calls,
    result_ids, text_only,
};
use crate::call::{CallArguments, ToolCall};
use crate::output::Content;
use crate::result::ToolResult;
use crate::tool::ToolDefinition;

/// The tool's parameters, and whether they are strict: the strict
/// variant is strict for a tool it can express ([`expressible`]) within
/// OpenAI's size limits ([`within_openai_limits`]); any other tool keeps
/// its plain definition.
fn parameters(tool: &ToolDefinition, strict: bool) -> (Value, bool) {
    if strict && expressible(tool.input_schema()) {
        let schema = strict_schema(tool.input_schema(), &OPENAI);
        if within_openai_limits(&schema) {
            return (schema, true);
        }
    }
    (tool.input_schema().as_value().clone(), false)
}

/// `{type: "function", function: {name, description, parameters, strict?}}`.
pub(crate) fn chat_definition(tool: &ToolDefinition, strict: bool) -> Value {
    let (parameters, strict) = parameters(tool, strict);
    let mut function = json!({
        "name": tool.name(),
        "description": tool.description(),
        "parameters": parameters,
    });
    if strict {
        function["strict"] = Value::Bool(true);
    }
    json!({"type": "function", "function": function})
}

/// `{type: "function", name, description, parameters, strict}`.
pub(crate) fn responses_definition(tool: &ToolDefinition, strict: bool) -> Value {
    let (parameters, strict) = parameters(tool, strict);
    json!({
        "type": "function",
        "name": tool.name(),
        "description": tool.description(),
        "parameters": parameters,
        "strict": strict,
    })
}

/// The `tool_calls` of a Chat Completions assistant message (the message,
/// or a whole completion whose answer holds it: the choice of `index` 0,
/// or the first when none has an index), in order. A message without
/// `tool_calls` (or with `null`) has none; a `tool_calls` that is not a
/// list, a call in the deprecated `function_call` form, or a message that
/// is no object at all, is an error, never read as no calls. So is a
/// completion whose answer's choice has no message (a streamed chunk's
/// `delta`, say), and one whose other choices hold calls too (pass the
/// message of the choice to answer).
///
/// A completion that was cut off (`finish_reason: "length"`) is read as
/// it is, though its last call's arguments may be cut short (the binder
/// then refuses them as `json_parse_error`): check the finish reason, and
/// answer such calls as not run rather than running them.
pub fn chat_tool_calls(message: &Value) -> Result<Vec<ToolCall>, FormatError> {
    if !message.is_object() {
        // A `tool_calls` list or `null` passed for the message would
        // otherwise read as a message without calls.
        return Err(FormatError::malformed("the message is not a JSON object"));
    }
    let message = match message.get("choices") {
        None => message,
        Some(choices) => first_choice_message(choices)?,
    };
    check_no_function_call(message)?;
    let tool_calls = match message.get("tool_calls") {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(tool_calls)) => tool_calls,
        Some(_) => return Err(FormatError::malformed("the message's tool_calls is not a list")),
    };
    let mut calls = Vec::new();
    for call in tool_calls {
        let name = call.pointer("/function/name").unwrap_or(&Value::Null);
        let (id, name) = call_id_and_name(&call["id"], name, "a tool call")?;
        calls.push(ToolCall::new(name, raw_arguments(call.pointer("/function/arguments"))).with_id(id));
    }
    check_call_ids(calls.iter().filter_map(|c| c.id.as_deref()))?;
    Ok(calls)
}

/// The place in a completion's (or a streamed chunk's) `choices` of the
/// answer's choice: the first whose `index` is 0, or that has none (some
/// servers leave it out), wherever the list puts it. `None` when no choice
/// is the answer's (a chunk of another choice, streamed alone).
pub(crate) fn first_choice(choices: &[Value]) -> Option<usize> {
    choices.iter().position(|choice| match choice.get("index") {
        None | Some(Value::Null) => true,
        Some(index) => index.as_u64() == Some(0),
    })
}

/// The message of a completion's answer's choice ([`first_choice`]), which
/// must be an object; calls in any other choice would be left unread, so
/// they are an error.
fn first_choice_message(choices: &Value) -> Result<&Value, FormatError> {
    let Some(choices) = choices.as_array() else {
        return Err(FormatError::malformed("the completion's choices is not a list"));
    };
    let at = first_choice(choices);
    let Some(message @ Value::Object(_)) = at.and_then(|at| choices[at].get("message")) else {
        return Err(FormatError::malformed(
            "the completion's first choice (index 0) has no message object (a streamed chunk's `delta` is no message)",
        ));
    };
    check_only_first_has_calls(
        choices,
        at,
        choice_holds_calls,
        ["completion", "choices", "message of the choice"],
    )?;
    Ok(message)
}

/// Whether a choice of a completion (its `message`) or of a streamed chunk
/// (its `delta`) holds calls, of either form.
pub(crate) fn choice_holds_calls(choice: &Value) -> bool {
    ["message", "delta"].iter().any(|key| {
        let part = &choice[*key];
        let calls = &part["tool_calls"];
        !(calls.is_null() || calls.as_array().is_some_and(Vec::is_empty)) || !part["function_call"].is_null()
    })
}

/// Refuses a message (or a streamed delta) that holds a call in the
/// deprecated `function_call` form, which this crate does not read: such a
/// call would otherwise be lost. `null` is no call.
pub(crate) fn check_no_function_call(message: &Value) -> Result<(), FormatError> {
    match message.get("function_call") {
        None | Some(Value::Null) => Ok(()),
        Some(_) => Err(FormatError::malformed(
            "the message holds a call in the deprecated `function_call` form, which is not supported; \
             send the tool definitions as `tools` so the model answers with `tool_calls`",
        )),
    }
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

/// One `role: "tool"` message per result, in the order given (the order
/// of the calls). Chat tool messages carry text only; an image or document
/// becomes a note saying it is not shown. OpenAI has no flag for a failed
/// result, so a failure's text says so itself: it begins `Error: ` (unless
/// it did already), and one without a message says that it failed without
/// one. Every result needs its call's id.
pub fn chat_reply(results: &[ToolResult]) -> Result<Vec<Value>, FormatError> {
    let ids = result_ids(results)?;
    Ok(results
        .iter()
        .zip(ids)
        .map(|(r, id)| json!({"role": "tool", "tool_call_id": id, "content": reply_text(r)}))
        .collect())
}

/// A result's text as the model reads it: a failure's marked as one.
fn reply_text(result: &ToolResult) -> String {
    let text = text_only(result);
    if result.is_error { error_text(&text) } else { text }
}

/// The text of a failed result where nothing else says it failed:
/// `Error: ` before it (unless it starts so already), and a failure
/// without a message says so, never reading as an empty success.
pub(crate) fn error_text(text: &str) -> String {
    let text = text.trim_start();
    if text.trim_end().is_empty() {
        format!("Error: {FAILED_WITHOUT_MESSAGE}")
    } else if text.get(..6).is_some_and(|start| start.eq_ignore_ascii_case("error:")) {
        text.to_owned()
    } else {
        format!("Error: {text}")
    }
}

/// The `function_call` items of a Responses output (the response object,
/// its `output` array, or any list of input items), in order; the item's
/// `call_id` is the call's id. In a conversation's list of input items, a
/// call whose `function_call_output` is in the list too is answered and
/// left out, so it is not run again.
pub fn responses_tool_calls(response: &Value) -> Result<Vec<ToolCall>, FormatError> {
    let items = response.get("output").unwrap_or(response);
    let Some(items) = items.as_array() else {
        return Err(FormatError::malformed("the response has no output array"));
    };
    let answered: HashSet<&str> = items
        .iter()
        .filter(|i| i["type"] == "function_call_output")
        .filter_map(|i| i["call_id"].as_str())
        .collect();
    let unanswered = |item: &&Value| item["call_id"].as_str().is_none_or(|id| !answered.contains(id));
    let mut calls = Vec::new();
    for item in items.iter().filter(|i| i["type"] == "function_call").filter(unanswered) {
        let (id, name) = call_id_and_name(&item["call_id"], &item["name"], "a function_call item")?;
        calls.push(ToolCall::new(name, raw_arguments(item.get("arguments"))).with_id(id));
    }
    check_call_ids(calls.iter().filter_map(|c| c.id.as_deref()))?;
    Ok(calls)
}

/// One `function_call_output` item per result, in the order given. Text
/// results are a string; results with images or documents are a list of
/// input items. A failure's text says it failed, as in [`chat_reply`].
/// Every result needs its call's id.
pub fn responses_reply(results: &[ToolResult]) -> Result<Vec<Value>, FormatError> {
    let ids = result_ids(results)?;
    Ok(results
        .iter()
        .zip(ids)
        .map(|(r, id)| {
            let output = if r.content.iter().all(|c| matches!(c, Content::Text { .. })) {
                Value::String(reply_text(r))
            } else {
                let mut items: Vec<Value> = r.content.iter().map(response_input_item).collect();
                if r.is_error {
                    // The first text says it failed, or a text saying so
                    // comes first.
                    match items.first_mut() {
                        Some(item) if item["type"] == "input_text" => {
                            item["text"] = Value::String(error_text(item["text"].as_str().unwrap_or_default()));
                        }
                        _ => items.insert(0, json!({"type": "input_text", "text": error_text("")})),
                    }
                }
                Value::Array(items)
            };
            json!({"type": "function_call_output", "call_id": id, "output": output})
        })
        .collect())
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
            "filename": title.as_deref().unwrap_or("document.pdf"),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_past_openai_s_strict_size_limits_keeps_its_plain_definition() {
        use crate::schema::{Field, Kind, Shape};
        let tool = |values: usize| {
            let zones = (0..values).map(|i| format!("Zone/{i}")).collect();
            let shape = Shape::new(Kind::Enum(zones)).describe("A time zone");
            ToolDefinition::new(
                "clock",
                "Tell the time.",
                vec![Field::new("zone", shape, false, "String")],
            )
        };
        let small = chat_definition(&tool(200), true);
        assert_eq!(small["function"]["strict"], true, "{small}");
        let large = chat_definition(&tool(1_200), true);
        assert!(large["function"].get("strict").is_none());
        assert_eq!(responses_definition(&tool(1_200), true)["strict"], false);
    }

    #[test]
    fn a_call_answered_in_the_same_input_list_is_left_out() {
        let input = json!([
            {"role": "user", "content": "look twice"},
            {"type": "function_call", "call_id": "call_1", "name": "a", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "call_1", "output": "done"},
            {"type": "function_call", "call_id": "call_2", "name": "a", "arguments": "{\"x\": 2}"},
        ]);
        let calls = responses_tool_calls(&input).unwrap();
        assert_eq!(calls.len(), 1, "{calls:?}");
        assert_eq!(calls[0].id.as_deref(), Some("call_2"));
    }

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
        assert!(
            chat_tool_calls(&json!({"role": "assistant", "tool_calls": null}))
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn tool_calls_that_are_no_list_are_an_error() {
        for bad in [json!({"id": "call_1"}), json!("call_1"), json!(3)] {
            let error = chat_tool_calls(&json!({"role": "assistant", "tool_calls": bad})).unwrap_err();
            assert_eq!(error.kind(), super::super::FormatErrorKind::Malformed, "{bad}");
        }
    }

    #[test]
    fn a_completion_whose_calls_would_be_left_unread_is_an_error() {
        let call = json!({"id": "call_1", "type": "function", "function": {"name": "a", "arguments": "{}"}});
        let message = json!({"role": "assistant", "tool_calls": [call]});
        for bad in [
            // A streamed chunk is no message.
            json!({"choices": [{"delta": {"tool_calls": [call]}}]}),
            json!({"choices": [{"message": "hi"}]}),
            json!({"choices": []}),
            json!({"choices": {"message": message}}),
            // Calls in a choice after the first.
            json!({"choices": [{"message": message}, {"message": message}]}),
            json!({"choices": [{"message": {"role": "assistant", "content": "hi"}}, {"message": message}]}),
        ] {
            let error = chat_tool_calls(&bad).unwrap_err();
            assert_eq!(error.kind(), super::super::FormatErrorKind::Malformed, "{bad}");
        }
        // Other choices without calls are no loss.
        let one = json!({"choices": [{"message": message}, {"message": {"role": "assistant", "content": "hi", "tool_calls": []}}]});
        assert_eq!(chat_tool_calls(&one).unwrap().len(), 1);
    }

    /// The answer is the choice of `index` 0 wherever the list puts it, as
    /// in a stream; a list without indices is read in its order.
    #[test]
    fn the_answer_is_the_choice_of_index_0_wherever_it_is() {
        let call = json!({"id": "call_1", "type": "function", "function": {"name": "a", "arguments": "{}"}});
        let calls = json!({"role": "assistant", "tool_calls": [call]});
        let text = json!({"role": "assistant", "content": "hi"});
        let completion = json!({"choices": [{"index": 1, "message": text}, {"index": 0, "message": calls}]});
        let read = chat_tool_calls(&completion).unwrap();
        assert_eq!(read[0].id.as_deref(), Some("call_1"));
        let choices = completion["choices"].as_array().unwrap();
        assert_eq!(first_choice(choices), Some(1));
        // Calls in the other choice, wherever it is, would be lost.
        let lost = json!({"choices": [{"index": 1, "message": calls}, {"index": 0, "message": text}]});
        let error = chat_tool_calls(&lost).unwrap_err();
        assert_eq!(error.kind(), super::super::FormatErrorKind::Malformed, "{error}");
        assert_eq!(
            first_choice(&[json!({"message": text}), json!({"message": calls})]),
            Some(0)
        );
        assert_eq!(first_choice(&[json!({"index": 2})]), None);
        assert!(chat_tool_calls(&json!({"choices": [{"index": 1, "message": calls}]})).is_err());
    }

    /// OpenAI has no flag for a failed result: its text says so, and a
    /// failure without a message never reads as an empty success.
    #[test]
    fn a_failure_says_so_where_no_flag_can() {
        use crate::output::{IntoToolOutput as _, ToolOutput};
        let result = |output: ToolOutput| ToolResult::new("t", Some("call_1".into()), output);
        for (output, expected) in [
            (ToolOutput::error(""), "Error: (the tool failed without a message)"),
            (ToolOutput::error(" \n"), "Error: (the tool failed without a message)"),
            (ToolOutput::error("not found"), "Error: not found"),
            // Said once, not twice.
            (ToolOutput::error("Error: disk full"), "Error: disk full"),
            (ToolOutput::error("error: disk full"), "error: disk full"),
            (ToolOutput::text("not found"), "not found"),
            (ToolOutput::text(""), ""),
        ] {
            let result = result(output);
            assert_eq!(
                chat_reply(std::slice::from_ref(&result)).unwrap()[0]["content"],
                expected
            );
            assert_eq!(responses_reply(&[result]).unwrap()[0]["output"], expected);
        }
        // A failure with an image: its first text says it failed...
        let mut failed = vec![Content::text("render failed"), Content::image(b"png", "image/png")].into_tool_output();
        failed.is_error = true;
        let output = &responses_reply(&[result(failed)]).unwrap()[0]["output"];
        assert_eq!(output[0], json!({"type": "input_text", "text": "Error: render failed"}));
        assert_eq!(output[1]["type"], "input_image");
        // ... or a text saying so comes first.
        let mut failed = vec![Content::image(b"png", "image/png")].into_tool_output();
        failed.is_error = true;
        let output = &responses_reply(&[result(failed)]).unwrap()[0]["output"];
        assert_eq!(
            output[0],
            json!({"type": "input_text", "text": "Error: (the tool failed without a message)"})
        );
        assert_eq!(output[1]["type"], "input_image");
    }

    #[test]
    fn responses_calls_use_call_id() {
        let response = json!({"output": [
            {"type": "reasoning", "id": "rs_1", "summary": []},
            {"type": "function_call", "id": "fc_1", "call_id": "call_9", "name": "a", "arguments": "{}"},
        ]});
        let calls = responses_tool_calls(&response).unwrap();
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].id.as_deref(), Some("call_9"));
    }
}
