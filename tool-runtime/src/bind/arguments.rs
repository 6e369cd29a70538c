//! The argument object of a call, from what a provider sent: parsed JSON,
//! raw text, or JSON text inside a JSON string.

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::BindMode;
use super::describe::describe_value;
use crate::call::{Arguments, Repr};
use crate::codes::{CallError, ErrorCode, Warning, WarningCode};

/// The argument object of a call: raw text is parsed first. Empty text
/// and `null` mean `{}`; text that is no JSON is `json_parse_error`; JSON
/// that is a string holding an object (arguments encoded twice) is parsed,
/// with the warning `json_string_parsed` and no path; any other JSON that
/// is no object is `arguments_not_object`. A `Value` follows the same
/// rules as the JSON it holds: a `Value::String` is arguments encoded
/// twice, never raw text. Strict mode decodes nothing: arguments encoded
/// twice are `arguments_not_object` there.
pub(crate) fn argument_object(
    arguments: Arguments<'_>,
    mode: BindMode,
) -> Result<(Map<String, Value>, Option<Warning>), CallError> {
    let decoded = match arguments.into_repr() {
        Repr::Text(text) => raw_object(&text),
        Repr::Json(value) => match &*value {
            Value::String(inner) => encoded_object(inner),
            // Borrowed arguments are copied here, as the binder changes them.
            _ => json_object(Cow::into_owned(value)).map(|map| (map, None)),
        },
    }?;
    if mode == BindMode::Strict && decoded.1.is_some() {
        return Err(CallError::new(
            ErrorCode::ArgumentsNotObject,
            "",
            "the arguments must be a JSON object, got a string holding one (arguments encoded twice, \
             which strict mode does not decode)",
        ));
    }
    Ok(decoded)
}

/// A parsed top-level value as the argument object.
fn json_object(value: Value) -> Result<Map<String, Value>, CallError> {
    match value {
        Value::Object(map) => Ok(map),
        Value::Null => Ok(Map::new()),
        other => Err(not_an_object(&other)),
    }
}

fn raw_object(raw: &str) -> Result<(Map<String, Value>, Option<Warning>), CallError> {
    // Empty, or JSON's own whitespace only; other spaces (a no-break
    // space, say) are no JSON and fail to parse below.
    if raw.trim_matches([' ', '\t', '\n', '\r']).is_empty() {
        return Ok((Map::new(), None));
    }
    match serde_json::from_str::<Value>(raw) {
        Ok(Value::String(inner)) => encoded_object(&inner),
        Ok(value) => json_object(value).map(|map| (map, None)),
        Err(e) => Err(CallError::new(
            ErrorCode::JsonParseError,
            "",
            format!("the arguments are not valid JSON ({e})"),
        )),
    }
}

/// A JSON string as the arguments: the object it holds (arguments encoded
/// twice), with the warning `json_string_parsed`; any other text is
/// `arguments_not_object`.
fn encoded_object(inner: &str) -> Result<(Map<String, Value>, Option<Warning>), CallError> {
    match serde_json::from_str::<Value>(inner) {
        Ok(Value::Object(map)) => {
            let warning = Warning::new(
                WarningCode::JsonStringParsed,
                "",
                "the arguments were a JSON object encoded as a string; it was parsed",
            );
            Ok((map, Some(warning)))
        }
        _ => Err(not_an_object(&Value::String(inner.to_owned()))),
    }
}

fn not_an_object(value: &Value) -> CallError {
    CallError::new(
        ErrorCode::ArgumentsNotObject,
        "",
        format!("the arguments must be a JSON object, got {}", describe_value(value)),
    )
}

/// Whether `value` written as JSON text would be longer than `limit`
/// bytes, counted exactly without writing it (strings and keys with their
/// escapes, numbers as `serde_json` writes them). The walk stops as soon as the
/// count passes `limit`, so it costs at most about `limit` steps, and it
/// keeps its own stack past a shallow depth, so no nesting overflows it.
pub(crate) fn json_size_exceeds(value: &Value, limit: usize) -> bool {
    // A first walk counts every string as if each byte needed the longest
    // escape and every float as long as any can be: most arguments are far
    // below the limit even so, and their bytes are never looked at.
    let mut most = 0usize;
    if !size_exceeds(value, limit, &mut most, 0, Count::AtMost) {
        return false;
    }
    let mut size = 0usize;
    size_exceeds(value, limit, &mut size, 0, Count::Exact)
}

/// How the walk counts strings and floats: exactly, or as long as they
/// could be written.
#[derive(Clone, Copy)]
enum Count {
    Exact,
    AtMost,
}

impl Count {
    fn string(self, s: &str) -> usize {
        match self {
            Count::Exact => string_len(s),
            // `\u001f` for every byte.
            Count::AtMost => s.len() * 6 + 2,
        }
    }

    fn number(self, n: &serde_json::Number) -> usize {
        match self {
            Count::Exact => number_len(n),
            // The longest float `serde_json` writes, `-2.2250738585072014e-308`.
            Count::AtMost if n.is_f64() => 24,
            Count::AtMost => number_len(n),
        }
    }
}

/// Nesting walked by recursion (no allocation, the common case); deeper
/// values continue on a heap stack.
const RECURSION: usize = 32;

fn size_exceeds(value: &Value, limit: usize, size: &mut usize, depth: usize, count: Count) -> bool {
    if depth == RECURSION {
        return deep_size_exceeds(value, limit, size, count);
    }
    match value {
        Value::Array(items) => {
            *size += 2 + items.len().saturating_sub(1);
            if items
                .iter()
                .any(|item| size_exceeds(item, limit, size, depth + 1, count))
            {
                return true;
            }
        }
        Value::Object(map) => {
            *size += 2 + map.len().saturating_sub(1);
            for (key, item) in map {
                *size += count.string(key) + 1;
                if *size > limit || size_exceeds(item, limit, size, depth + 1, count) {
                    return true;
                }
            }
        }
        scalar => *size += scalar_len(scalar, count),
    }
    *size > limit
}

fn scalar_len(value: &Value, count: Count) -> usize {
    match value {
        Value::Null | Value::Bool(true) => 4,
        Value::Bool(false) => 5,
        Value::Number(n) => count.number(n),
        Value::String(s) => count.string(s),
        Value::Array(_) | Value::Object(_) => 0,
    }
}

/// [`size_exceeds`] for what lies below the recursion depth.
fn deep_size_exceeds(value: &Value, limit: usize, total: &mut usize, count: Count) -> bool {
    let mut size = *total;
    let mut pending = vec![value];
    while let Some(value) = pending.pop() {
        size += match value {
            Value::Null | Value::Bool(true) => 4,
            Value::Bool(false) => 5,
            Value::Number(n) => count.number(n),
            Value::String(s) => count.string(s),
            Value::Array(items) => {
                pending.extend(items);
                2 + items.len().saturating_sub(1)
            }
            Value::Object(map) => {
                let mut keys = 2 + map.len().saturating_sub(1);
                for (key, item) in map {
                    keys += count.string(key) + 1;
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
    *total = size;
    false
}

/// The length of a string written as JSON: its quotes, and its escapes
/// (`\"`, `\\` and the control characters, `\n` or `\u001f`).
fn string_len(s: &str) -> usize {
    // Most strings escape nothing: one counting pass (which the compiler
    // vectorizes) says so.
    let escaped = s.bytes().filter(|&b| b < 0x20 || b == b'"' || b == b'\\').count();
    if escaped == 0 {
        return s.len() + 2;
    }
    let escapes: usize = s
        .bytes()
        .map(|b| match b {
            b'"' | b'\\' | b'\n' | b'\r' | b'\t' | 0x08 | 0x0c => 1,
            0..0x20 => 5,
            _ => 0,
        })
        .sum();
    s.len() + 2 + escapes
}

/// The length of a number written as JSON: integers by their digits,
/// floats as `serde_json` writes them (its `Display` is its JSON form).
fn number_len(n: &serde_json::Number) -> usize {
    if let Some(u) = n.as_u64() {
        u.checked_ilog10().unwrap_or(0) as usize + 1
    } else if let Some(i) = n.as_i64() {
        i.unsigned_abs().checked_ilog10().unwrap_or(0) as usize + 2
    } else {
        struct Count(usize);
        impl std::fmt::Write for Count {
            fn write_str(&mut self, s: &str) -> std::fmt::Result {
                self.0 += s.len();
                Ok(())
            }
        }
        let mut count = Count(0);
        let _ = std::fmt::Write::write_fmt(&mut count, format_args!("{n}"));
        count.0
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_size_estimate_is_the_json_length_at_any_depth() {
        let mut deep = json!("leaf");
        for _ in 0..200 {
            deep = json!({"k": [deep, 7, null]});
        }
        for value in [
            json!({"pattern": "*.rs", "max_results": 50, "flags": [true, false, null], "n": -3}),
            json!({"floats": [0.5, 1e-7, -2.5e300, 100.0, 0.1, f64::MAX, f64::MIN_POSITIVE]}),
            json!({"quote\"d": "a \"quoted\" back\\slash", "ctl\n": "\u{1}\u{1f}\t\r\n\u{8}\u{c}", "wide": "é€😀"}),
            json!([]),
            json!({}),
            deep,
        ] {
            let exact = serde_json::to_string(&value).unwrap().len();
            assert!(!json_size_exceeds(&value, exact), "{exact}");
            assert!(json_size_exceeds(&value, exact - 1), "{exact}");
        }
    }
}
