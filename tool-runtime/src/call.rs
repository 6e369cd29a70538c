//! One call a model asked for: the tool's name, its id, and the arguments
//! as they arrived (parsed JSON, or the raw text some providers send).

use std::borrow::Cow;

use serde_json::{Map, Value};

/// The arguments of a call: a JSON value, or the raw text a provider sent
/// (OpenAI sends arguments as a string).
#[derive(Clone, Debug, PartialEq)]
pub enum CallArguments {
    /// Arguments already parsed. A `Value::String` is the JSON it is, a
    /// string: arguments encoded twice when it holds an object, else no
    /// object. Raw text goes in `Text`.
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

/// The arguments of one call as [`ToolRegistry::call`] and
/// [`ToolRegistry::complete`] take them: anything a [`CallArguments`] can be
/// made from, or a borrow of raw text (`&str`) or of a parsed `Value`
/// (`&Value`), which the registry then reads in place without a copy.
///
/// ```
/// # use tool_runtime::Arguments;
/// let text = String::from(r#"{"pattern": "*.rs"}"#);
/// let borrowed: Arguments<'_> = text.as_str().into(); // read in place
/// let owned: Arguments<'static> = serde_json::json!({"pattern": "*.rs"}).into();
/// # let _ = (borrowed, owned);
/// ```
///
/// [`ToolRegistry::call`]: crate::ToolRegistry::call
/// [`ToolRegistry::complete`]: crate::ToolRegistry::complete
#[derive(Clone, Debug, PartialEq)]
pub struct Arguments<'a>(Repr<'a>);

/// What [`Arguments`] hold.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Repr<'a> {
    Json(Cow<'a, Value>),
    Text(Cow<'a, str>),
}

impl<'a> Arguments<'a> {
    /// Raw text or a parsed value, as held.
    pub(crate) fn repr(&self) -> &Repr<'a> {
        &self.0
    }

    /// Raw text or a parsed value, borrowed or owned.
    pub(crate) fn into_repr(self) -> Repr<'a> {
        self.0
    }
}

impl From<CallArguments> for Arguments<'static> {
    fn from(arguments: CallArguments) -> Self {
        match arguments {
            CallArguments::Json(value) => value.into(),
            CallArguments::Text(text) => text.into(),
        }
    }
}

impl From<Value> for Arguments<'static> {
    fn from(value: Value) -> Self {
        Arguments(Repr::Json(Cow::Owned(value)))
    }
}

impl From<Map<String, Value>> for Arguments<'static> {
    fn from(map: Map<String, Value>) -> Self {
        Value::Object(map).into()
    }
}

impl From<String> for Arguments<'static> {
    fn from(text: String) -> Self {
        Arguments(Repr::Text(Cow::Owned(text)))
    }
}

impl<'a> From<&'a str> for Arguments<'a> {
    fn from(text: &'a str) -> Self {
        Arguments(Repr::Text(Cow::Borrowed(text)))
    }
}

impl<'a> From<&'a String> for Arguments<'a> {
    fn from(text: &'a String) -> Self {
        text.as_str().into()
    }
}

impl<'a> From<&'a Value> for Arguments<'a> {
    fn from(value: &'a Value) -> Self {
        Arguments(Repr::Json(Cow::Borrowed(value)))
    }
}

impl<'a> From<&'a CallArguments> for Arguments<'a> {
    fn from(arguments: &'a CallArguments) -> Self {
        match arguments {
            CallArguments::Json(value) => value.into(),
            CallArguments::Text(text) => text.as_str().into(),
        }
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
