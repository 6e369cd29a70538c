//! One call a model asked for: the tool's name, its id, and the arguments
//! as they arrived (parsed JSON, or the raw text some providers send).

use serde_json::{Map, Value};

/// The arguments of a call: a JSON value, or the raw text a provider sent
/// (OpenAI sends arguments as a string).
#[derive(Clone, Debug, PartialEq)]
pub enum CallArguments {
    /// Arguments already parsed.
    Json(Value),
    /// Raw argument text; empty text and `null` mean `{}`.
    Text(String),
}

impl From<Value> for CallArguments {
    fn from(value: Value) -> Self {
        CallArguments::Json(value)
    }
}

impl From<Map<String, Value>> for CallArguments {
    fn from(map: Map<String, Value>) -> Self {
        CallArguments::Json(Value::Object(map))
    }
}

impl From<String> for CallArguments {
    fn from(text: String) -> Self {
        CallArguments::Text(text)
    }
}

impl From<&str> for CallArguments {
    fn from(text: &str) -> Self {
        CallArguments::Text(text.to_owned())
    }
}

impl From<&String> for CallArguments {
    fn from(text: &String) -> Self {
        CallArguments::Text(text.clone())
    }
}

/// One call a model asked for.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ToolCall {
    /// The provider's id (`toolu_...`, `call_...`); `None` when it gave none.
    pub id: Option<String>,
    /// The tool's name as the model wrote it.
    pub name: String,
    /// The arguments as the model sent them.
    pub arguments: CallArguments,
}

impl ToolCall {
    /// A call with no id.
    pub fn new(name: impl Into<String>, arguments: impl Into<CallArguments>) -> Self {
        ToolCall {
            id: None,
            name: name.into(),
            arguments: arguments.into(),
        }
    }

    /// Sets the provider's id.
    pub fn with_id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }
}
