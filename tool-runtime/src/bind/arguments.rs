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
