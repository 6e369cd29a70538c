//! The argument object of a call, from what a provider sent: parsed JSON,
//! raw text, or JSON text inside a JSON string.

use serde_json::{Map, Value};

use super::describe::describe_value;
use crate::codes::{CallError, ErrorCode};

/// Turns a top-level JSON value into the argument object: `null` means `{}`;
/// a string is raw argument text (OpenAI's arguments, held in a `Value`);
/// anything else is `arguments_not_object`.
pub fn arguments_object(value: Value) -> Result<Map<String, Value>, CallError> {
    match value {
        Value::Object(map) => Ok(map),
        Value::Null => Ok(Map::new()),
        Value::String(text) => parse_raw_arguments(&text),
        other => Err(CallError::new(
            ErrorCode::ArgumentsNotObject,
            "",
            format!("the arguments must be a JSON object, got {}", describe_value(&other)),
        )),
    }
}

/// Parses raw argument text as a provider sends it: empty text or `null`
/// mean `{}`, text that is not JSON is `json_parse_error`.
pub fn parse_raw_arguments(raw: &str) -> Result<Map<String, Value>, CallError> {
    if raw.trim().is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_str::<Value>(raw) {
        Ok(value) => arguments_object(value),
        Err(e) => Err(CallError::new(
            ErrorCode::JsonParseError,
            "",
            format!("the arguments are not valid JSON ({e})"),
        )),
    }
}

/// Whether `value` written as JSON text would be longer than `limit`
/// bytes, estimated without writing it: strings, keys and punctuation are
/// counted exactly, numbers by their digits. The walk stops as soon as the
/// count passes `limit`, so it costs at most about `limit` steps, and it
/// keeps its own stack, so no nesting overflows it.
pub(crate) fn json_size_exceeds(value: &Value, limit: usize) -> bool {
    let mut size = 0usize;
    let mut pending = vec![value];
    while let Some(value) = pending.pop() {
        size += match value {
            Value::Null | Value::Bool(true) => 4,
            Value::Bool(false) => 5,
            Value::Number(n) => number_len(n),
            Value::String(s) => s.len() + 2,
            Value::Array(items) => {
                pending.extend(items);
                2 + items.len().saturating_sub(1)
            }
            Value::Object(map) => {
                let mut keys = 2 + map.len().saturating_sub(1);
                for (key, item) in map {
                    keys += key.len() + 3;
                    pending.push(item);
                    if size + keys > limit {
                        break;
                    }
                }
                keys
            }
        };
        if size > limit {
            return true;
        }
    }
    false
}

/// The length of a number written as JSON, counted by its digits (floats
/// as at most 24 characters).
fn number_len(n: &serde_json::Number) -> usize {
    if let Some(u) = n.as_u64() {
        u.checked_ilog10().unwrap_or(0) as usize + 1
    } else if let Some(i) = n.as_i64() {
        i.unsigned_abs().checked_ilog10().unwrap_or(0) as usize + 2
    } else {
        24
    }
}
