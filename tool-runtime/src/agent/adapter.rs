//! Everything the loop takes from the core, in one place: turning a model's
//! tool call into a registry call, running it, and reading its result.

use std::sync::Arc;

use serde_json::Value;
use tokio::time::Instant;

use crate::model::{ToolResultBlock, ToolUse};
use crate::registry::HeldSlot;
pub(crate) use crate::registry::Slots;
use crate::result::Outcome;
use crate::text::{clip, clip_at};
use crate::{CallArguments, Cancellation, Tool, ToolCall, ToolRegistry, ToolResult};

/// The same call with arguments an approver chose.
pub(crate) fn with_arguments(mut call: ToolCall, arguments: Value) -> ToolCall {
    call.arguments = CallArguments::Json(arguments);
    call
}

/// What the model reads, before a call's result, when the approver
/// changed its arguments: the arguments the call was made with, cut to a
/// bounded length.
pub(crate) fn changed_arguments_note(arguments: &Value) -> String {
    format!(
        "The arguments of this call were changed before it was made; it was made with {}.",
        clip_at(&arguments.to_string(), CHANGED_ARGUMENTS_CHARS)
    )
}

/// The most characters of changed arguments quoted back to the model.
const CHANGED_ARGUMENTS_CHARS: usize = 1024;

/// The arguments as JSON, for events.
pub(crate) fn arguments_json(call: &ToolCall) -> Value {
    match &call.arguments {
        CallArguments::Json(value) => value.clone(),
        CallArguments::Text(text) => serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.clone())),
    }
}

/// Waits for a slot of the registry's concurrency limit for `call`, made
/// at `made`; a call that gets none within its time limit, or is cancelled
/// first, or whose arguments are refused, is answered with the result
/// returned.
pub(crate) async fn slot<'s>(
    registry: &ToolRegistry,
    slots: &'s Slots,
    call: &ToolCall,
    made: Instant,
    cancellation: &Cancellation,
    strict_definitions: bool,
) -> Result<HeldSlot<'s>, ToolResult> {
    registry
        .slot(slots, call, made, Some(cancellation), strict_definitions)
        .await
        .map_err(|not_started| *not_started)
}

/// Runs one call made at `made`, its time limit counted from then; a
/// raised `cancellation` makes it a `Cancelled` result. `strict_definitions`:
/// the model was sent strict definitions (see `Model::sends_strict_tools`).
pub(crate) async fn run(
    registry: &ToolRegistry,
    call: ToolCall,
    cancellation: &Cancellation,
    made: Instant,
    strict_definitions: bool,
) -> ToolResult {
    registry
        .call_made(call, Some(cancellation), made, strict_definitions)
        .await
}

/// The result of a call of a tool the run does not offer; `available` is
/// the sentence naming the tools it does.
pub(crate) fn not_available(call: &ToolUse, available: &str) -> ToolResult {
    let text = format!(
        "The tool `{}` is not available in this run. {available} Call one of them instead.",
        clip(&call.name)
    );
    not_run(call, text, false)
}

/// The result of a call cancelled before it ran (while its approver was
/// asked, or while it waited for one).
pub(crate) fn cancelled_before_it_ran(call: &ToolUse) -> ToolResult {
    let text = format!("The call of `{}` was cancelled before it ran.", clip(&call.name));
    not_run(call, text, true)
}

/// An `is_error` result for a call that did not run (refused, not allowed,
/// cancelled before it started); the model's name for the tool is kept
/// cut to 64 characters, as the registry keeps an unknown one.
pub(crate) fn not_run(call: &ToolUse, text: String, cancelled: bool) -> ToolResult {
    let outcome = if cancelled {
        Outcome::Cancelled
    } else {
        Outcome::ToolFailed
    };
    ToolResult::failure(&clip(&call.name), Some(call.id.clone()), outcome, text)
}

/// The sentence listing the tools the model may call, bounded however
/// many there are.
pub(crate) fn available_tools<'a>(names: impl Iterator<Item = &'a str> + Clone) -> String {
    crate::result::available_tools(names)
}

/// The transcript block of a result, rendered by the core's Anthropic
/// format (the transcript's content blocks are Anthropic's).
pub(crate) fn result_block(call_id: &str, result: &ToolResult) -> ToolResultBlock {
    let block = crate::format::anthropic::tool_result_block(result);
    let content = match block.get("content") {
        Some(Value::Array(blocks)) => blocks.clone(),
        _ => Vec::new(),
    };
    ToolResultBlock {
        tool_use_id: call_id.to_owned(),
        content,
        is_error: result.is_error,
    }
}

pub(crate) fn call_id(result: &ToolResult) -> Option<&str> {
    result.call_id.as_deref()
}

pub(crate) fn tool(result: &ToolResult) -> &str {
    result.tool()
}

pub(crate) fn is_error(result: &ToolResult) -> bool {
    result.is_error
}

pub(crate) fn warnings(result: &ToolResult) -> Vec<String> {
    result.warning_codes()
}

pub(crate) fn errors(result: &ToolResult) -> Vec<String> {
    result.error_codes()
}

pub(crate) fn text(result: &ToolResult) -> String {
    result.text()
}

/// The registry's concurrency limit, for the calls of one run.
pub(crate) fn slots(registry: &ToolRegistry) -> Arc<Slots> {
    Arc::new(registry.slots())
}

pub(crate) fn tools(registry: &ToolRegistry) -> impl Iterator<Item = Arc<dyn Tool>> {
    registry.tools()
}

pub(crate) type SharedRegistry = Arc<ToolRegistry>;
