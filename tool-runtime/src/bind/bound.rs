//! [`BoundArguments`]: where a tool takes its parameters from once the
//! binder has accepted a call.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::codes::{CallError, ErrorCode};

/// The normalized arguments of one call, from which the generated
/// dispatcher takes each parameter as its Rust type.
///
/// A deserialization failure (possible only with a hand-written
/// `Deserialize` that is stricter than its schema) is recorded as a
/// `type_mismatch` at the parameter, so every failure still reaches the model.
#[derive(Debug)]
pub struct BoundArguments {
    map: Map<String, Value>,
    errors: Vec<CallError>,
}

impl BoundArguments {
    /// Wraps an argument object that the binder accepted.
    pub fn new(map: Map<String, Value>) -> Self {
        BoundArguments {
            map,
            errors: Vec::new(),
        }
    }

    /// The whole normalized argument object, for a tool that forwards its
    /// arguments rather than taking them one by one (a mounted MCP tool).
    pub fn into_map(self) -> Map<String, Value> {
        self.map
    }

    /// Takes parameter `name` (each parameter once); an absent one deserializes from `null`
    /// (which gives `None` for `Option`).
    pub fn take<T: DeserializeOwned>(&mut self, name: &str) -> Option<T> {
        let value = self.slot(name).map(Value::take).unwrap_or(Value::Null);
        self.deserialize(name, value)
    }

    /// Takes parameter `name`, or `default()` when it is absent.
    pub fn take_or_else<T: DeserializeOwned>(&mut self, name: &str, default: impl FnOnce() -> T) -> Option<T> {
        match self.slot(name).map(Value::take) {
            None => Some(default()),
            Some(value) => self.deserialize(name, value),
        }
    }

    /// The value of parameter `name`, to be taken out: left as `null` in
    /// the map, which is cheaper than removing the key, and read no more.
    fn slot(&mut self, name: &str) -> Option<&mut Value> {
        self.map.get_mut(name)
    }

    fn deserialize<T: DeserializeOwned>(&mut self, name: &str, value: Value) -> Option<T> {
        match serde_json::from_value(value) {
            Ok(v) => Some(v),
            Err(e) => {
                // The type's message may quote the value: cut, and escaped
                // so it cannot start a line of the text the model reads.
                let message = e.to_string();
                let message = crate::text::clip_at(&message, REJECTION_CHARS);
                self.errors.push(CallError::new(
                    ErrorCode::TypeMismatch,
                    name,
                    format!("the value was rejected: {message}"),
                ));
                None
            }
        }
    }

    /// The errors met while taking parameters.
    pub fn into_errors(self) -> Vec<CallError> {
        self.errors
    }
}

/// How much of a type's own message for a value it rejected is kept.
const REJECTION_CHARS: usize = 160;
