//! Provider wire formats: tool definitions out, calls in, results out.
//!
//! One module a provider: [`anthropic`], [`openai`] (Chat Completions and
//! Responses), [`gemini`], [`mcp`]. Every definition is rendered from the
//! tool's one cached schema and kept, so listing definitions builds no schema
//! per call; [`strict`] holds the schema rewrites the strict variants need.

use std::borrow::{Borrow, Cow};
use std::collections::HashSet;
use std::fmt;
use std::hash::Hash;

use serde_json::Value;

use crate::result::ToolResult;
use crate::schema::Schema;
use crate::text::clip;
use crate::tool::ToolDefinition;

pub mod anthropic;
pub mod gemini;
pub mod mcp;
pub mod openai;
#[doc(hidden)]
pub mod strict; // the strict rewrite, public only for the SDK-type tests

/// A provider's format for tool definitions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Format {
    /// Anthropic Messages: `{name, description, input_schema}`.
    Anthropic,
    /// Anthropic with `strict: true` and a schema strict tool use accepts. A
    /// tool whose schema strict mode cannot express (a free-form map, a
    /// `serde_json::Value`) keeps its plain definition.
    AnthropicStrict,
    /// OpenAI Chat Completions: `{type: "function", function: {...}}`.
    OpenAiChat,
    /// OpenAI Chat Completions with `strict: true` (structured outputs); a
    /// tool strict mode cannot express keeps its plain definition.
    OpenAiChatStrict,
    /// OpenAI Responses: `{type: "function", name, description, parameters}`.
    OpenAiResponses,
    /// OpenAI Responses with `strict: true`.
    OpenAiResponsesStrict,
    /// Gemini: one function declaration (OpenAPI subset schema).
    Gemini,
    /// MCP `tools/list` entry: `{name, description, inputSchema, ...}`.
    Mcp,
}

impl Format {
    /// Every format, in the order of the render cache.
    pub const ALL: &'static [Format] = &[
        Format::Anthropic,
        Format::AnthropicStrict,
        Format::OpenAiChat,
        Format::OpenAiChatStrict,
        Format::OpenAiResponses,
        Format::OpenAiResponsesStrict,
        Format::Gemini,
        Format::Mcp,
    ];

    /// The format's command-line name: `anthropic`, `openai-chat`,
    /// `openai-responses`, `gemini`, `mcp`; `strict` selects the strict
    /// variant where one exists.
    pub fn from_name(name: &str, strict: bool) -> Option<Self> {
        Some(match (name, strict) {
            ("anthropic", false) => Format::Anthropic,
            ("anthropic", true) => Format::AnthropicStrict,
            ("openai-chat", false) => Format::OpenAiChat,
            ("openai-chat", true) => Format::OpenAiChatStrict,
            ("openai-responses", false) => Format::OpenAiResponses,
            ("openai-responses", true) => Format::OpenAiResponsesStrict,
            ("gemini", false) => Format::Gemini,
            ("mcp", false) => Format::Mcp,
            _ => return None,
        })
    }

    /// Whether this is a strict variant.
    pub fn is_strict(self) -> bool {
        matches!(
            self,
            Format::AnthropicStrict | Format::OpenAiChatStrict | Format::OpenAiResponsesStrict
        )
    }

    /// The format's place in [`Format::ALL`].
    pub(crate) fn slot(self) -> usize {
        self as usize
    }
}

/// Renders `tool`'s definition in `format`. The registry keeps what this
/// returns, so each tool is rendered once per format.
pub(crate) fn render(tool: &ToolDefinition, format: Format) -> Value {
    match format {
        Format::Anthropic => anthropic::definition(tool, false),
        Format::AnthropicStrict => anthropic::definition(tool, true),
        Format::OpenAiChat => openai::chat_definition(tool, false),
        Format::OpenAiChatStrict => openai::chat_definition(tool, true),
        Format::OpenAiResponses => openai::responses_definition(tool, false),
        Format::OpenAiResponsesStrict => openai::responses_definition(tool, true),
        Format::Gemini => gemini::declaration(tool),
        Format::Mcp => mcp::tool(tool),
    }
}

/// Which tools one request carries: by name lists and by tags.
///
/// With no rule set, every tool is selected. `allow` and `tags` narrow the
/// set (a tool passes if it is allowed by name or carries one of the tags);
/// `deny` removes tools whatever else says.
///
/// ```
/// use tool_runtime::format::Selection;
/// let selection = Selection::all().with_tags(["fs"]).deny(["delete_file"]);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selection {
    allow: Option<HashSet<String>>,
    tags: Option<HashSet<String>>,
    deny: HashSet<String>,
}

impl Selection {
    /// Every tool.
    pub fn all() -> Self {
        Self::default()
    }

    /// Only these tools (plus any chosen by tag).
    pub fn allow<I: IntoIterator<Item = S>, S: Into<String>>(mut self, names: I) -> Self {
        self.allow
            .get_or_insert_with(HashSet::new)
            .extend(names.into_iter().map(Into::into));
        self
    }

    /// Only tools carrying one of these tags (plus any allowed by name).
    pub fn with_tags<I: IntoIterator<Item = S>, S: Into<String>>(mut self, tags: I) -> Self {
        self.tags
            .get_or_insert_with(HashSet::new)
            .extend(tags.into_iter().map(Into::into));
        self
    }

    /// Never these tools.
    pub fn deny<I: IntoIterator<Item = S>, S: Into<String>>(mut self, names: I) -> Self {
        self.deny.extend(names.into_iter().map(Into::into));
        self
    }

    /// Whether the selection takes `tool`.
    pub fn includes(&self, tool: &ToolDefinition) -> bool {
        if self.deny.contains(tool.name()) {
            return false;
        }
        if self.allow.is_none() && self.tags.is_none() {
            return true;
        }
        let by_name = self.allow.as_ref().is_some_and(|a| a.contains(tool.name()));
        let by_tag = self
            .tags
            .as_ref()
            .is_some_and(|tags| tool.tags().iter().any(|t| tags.contains(t)));
        by_name || by_tag
    }
}

/// The definitions one request carries, in one format. Serializes as the
/// request's `tools` array, or for Gemini as one
/// `{functionDeclarations: [...]}` object (wrap it in the request's `tools`
/// array). Indexing gives one tool's definition.
///
/// Serialized, each tool's parameters keep their declaration order, and the
/// same tools serialize to the same bytes every time (what prompt caching
/// needs); read as `Value`s, their maps are ordered by key.
#[derive(Clone, Debug)]
pub struct ToolDefinitions<'a> {
    format: Format,
    items: Vec<Rendered<'a>>,
}

/// One tool's rendered definition: kept by the registry, or shared with the
/// set of tools it belongs to (a mounted server's, which may be replaced
/// while the listing is in use).
#[derive(Clone, Debug)]
pub(crate) enum Rendered<'a> {
    Borrowed(&'a Schema),
    Shared(std::sync::Arc<Schema>),
}

impl Rendered<'_> {
    fn schema(&self) -> &Schema {
        match self {
            Rendered::Borrowed(schema) => schema,
            Rendered::Shared(schema) => schema,
        }
    }
}

impl serde::Serialize for Rendered<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.schema().serialize(serializer)
    }
}

impl<'a> ToolDefinitions<'a> {
    pub(crate) fn new(format: Format, items: Vec<Rendered<'a>>) -> Self {
        ToolDefinitions { format, items }
    }
}

impl<'a> ToolDefinitions<'a> {
    /// How many tools.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// No tool was selected.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Each tool's definition, in order; it reads as a `Value` and
    /// serializes in order.
    pub fn iter(&self) -> impl Iterator<Item = &Schema> + '_ {
        self.items.iter().map(Rendered::schema)
    }

    /// The definitions as one JSON value (its maps ordered by key; serialize
    /// `self` to keep the parameters' order).
    pub fn to_json(&self) -> Value {
        let items = Value::Array(self.items.iter().map(|v| v.schema().as_value().clone()).collect());
        match self.format {
            Format::Gemini => serde_json::json!({ "functionDeclarations": items }),
            _ => items,
        }
    }
}

impl std::ops::Index<usize> for ToolDefinitions<'_> {
    type Output = Value;

    fn index(&self, index: usize) -> &Value {
        self.items[index].schema().as_value()
    }
}

impl serde::Serialize for ToolDefinitions<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap as _;
        match self.format {
            Format::Gemini => {
                let mut map = serializer.serialize_map(Some(1))?;
                map.serialize_entry("functionDeclarations", &self.items)?;
                map.end()
            }
            _ => self.items.serialize(serializer),
        }
    }
}

/// A provider message that cannot be read, or results that cannot answer
/// the calls they claim to answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FormatError {
    kind: FormatErrorKind,
    message: String,
}

/// What kind of problem a [`FormatError`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FormatErrorKind {
    /// The message is not of the provider's shape: a `tool_calls` that is
    /// not a list, a block without its name, no content.
    Malformed,
    /// A call or result without the id its provider requires.
    MissingId,
    /// Two calls, or two results, with one id.
    DuplicateId,
    /// A reply with no results, which a provider refuses as a message
    /// with nothing in it (and which answers no call).
    NoResults,
}

impl FormatError {
    pub(crate) fn new(kind: FormatErrorKind, message: impl Into<String>) -> Self {
        FormatError {
            kind,
            message: message.into(),
        }
    }

    pub(crate) fn malformed(message: impl Into<String>) -> Self {
        Self::new(FormatErrorKind::Malformed, message)
    }

    /// Refuses a reply of no results, for a provider whose message of
    /// nothing the API refuses.
    pub(crate) fn check_some_results(results: &[ToolResult]) -> Result<(), FormatError> {
        if results.is_empty() {
            return Err(Self::new(
                FormatErrorKind::NoResults,
                "a reply needs at least one result: one for each call of the message it answers",
            ));
        }
        Ok(())
    }

    /// What kind of problem this is.
    pub fn kind(&self) -> FormatErrorKind {
        self.kind
    }
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for FormatError {}

/// A call's tool name: a non-empty string. A call without one is a
/// malformed message, never a call of the tool named "".
pub(crate) fn tool_name(name: &Value) -> Option<&str> {
    name.as_str().filter(|name| !name.is_empty())
}

/// A call's id and tool name as its block holds them (`what` names the
/// block): an id that is absent or `null` is `MissingId`; one that is no
/// string, and a name that is no [`tool_name`], are `Malformed`. An empty
/// id is [`check_call_id`]'s to refuse.
pub(crate) fn call_id_and_name<'v>(
    id: &'v Value,
    name: &'v Value,
    what: &str,
) -> Result<(&'v str, &'v str), FormatError> {
    let id = match id {
        Value::String(id) => id,
        Value::Null => {
            return Err(FormatError::new(
                FormatErrorKind::MissingId,
                format!("{what} lacks its id"),
            ));
        }
        _ => return Err(FormatError::malformed(format!("{what} has an id that is not a string"))),
    };
    let Some(name) = tool_name(name) else {
        return Err(FormatError::malformed(format!("{what} lacks its tool name")));
    };
    Ok((id, name))
}

/// Refuses a response of several alternatives (OpenAI's `choices`,
/// Gemini's `candidates`) where one other than the answer's, the first (at
/// `answer` in the list, if any), holds calls, as `holds_calls` tells: only
/// the answer's is read, so those calls would be dropped unread. The words
/// name, for the error, the response, the alternatives and the part to pass
/// instead (`["completion", "choices", "message of the choice"]`).
pub(crate) fn check_only_first_has_calls(
    alternatives: &[Value],
    answer: Option<usize>,
    holds_calls: impl Fn(&Value) -> bool,
    [response, plural, part]: [&str; 3],
) -> Result<(), FormatError> {
    let others = alternatives
        .iter()
        .enumerate()
        .filter(|&(at, alternative)| Some(at) != answer && holds_calls(alternative))
        .count();
    if others == 0 {
        return Ok(());
    }
    Err(FormatError::malformed(format!(
        "the {response} has {} {plural}, {others} of them besides the first with calls; pass the {part} to answer",
        alternatives.len()
    )))
}

/// Checks that call ids are present and distinct.
pub(crate) fn check_call_ids<'a>(ids: impl Iterator<Item = &'a str>) -> Result<(), FormatError> {
    let mut seen: HashSet<&str> = HashSet::new();
    for id in ids {
        check_call_id(id, &mut seen)?;
    }
    Ok(())
}

/// Checks one call id of a message against the ids `seen` before it
/// (borrowed, or owned where the message arrives in pieces): present and
/// not among them. `seen` then holds it.
pub(crate) fn check_call_id<'a, S>(id: &'a str, seen: &mut HashSet<S>) -> Result<(), FormatError>
where
    S: Borrow<str> + Eq + Hash + From<&'a str>,
{
    if id.is_empty() {
        return Err(FormatError::new(
            FormatErrorKind::MissingId,
            "a tool call has an empty id",
        ));
    }
    if !seen.insert(S::from(id)) {
        return Err(FormatError::new(
            FormatErrorKind::DuplicateId,
            format!("the tool call id `{}` appears twice", clip(id)),
        ));
    }
    Ok(())
}

/// The results' call ids, each present and distinct: what a reply that
/// answers calls by id needs.
pub(crate) fn result_ids(results: &[ToolResult]) -> Result<Vec<&str>, FormatError> {
    let mut ids = Vec::with_capacity(results.len());
    for result in results {
        let Some(id) = result.call_id.as_deref().filter(|id| !id.is_empty()) else {
            return Err(FormatError::new(
                FormatErrorKind::MissingId,
                format!(
                    "a result of `{}` has no call id to answer; give its call an id (ToolCall::with_id)",
                    result.tool()
                ),
            ));
        };
        ids.push(id);
    }
    check_result_ids_distinct(ids.iter().copied())?;
    Ok(ids)
}

/// Checks that no two results answer one call id.
pub(crate) fn check_result_ids_distinct<'a>(ids: impl Iterator<Item = &'a str>) -> Result<(), FormatError> {
    let mut seen = HashSet::new();
    for id in ids {
        if !seen.insert(id) {
            return Err(FormatError::new(
                FormatErrorKind::DuplicateId,
                format!("two results answer the call id `{}`", clip(id)),
            ));
        }
    }
    Ok(())
}

/// How a content block travels to providers that take only common media
/// (the Anthropic and OpenAI APIs refuse, say, an SVG image or a Markdown
/// file sent as base64). A document's title is cut as any name is
/// ([`clip`]): it is sent beside the text, and counts toward no limit.
pub(crate) enum Carried<'a> {
    /// Plain text.
    Text(&'a str),
    /// A `text/*` document, decoded.
    TextDocument { text: String, title: Option<Cow<'a, str>> },
    /// A JPEG, PNG, GIF or WebP image.
    Image { data: &'a str, mime_type: &'a str },
    /// A PDF document.
    Pdf { data: &'a str, title: Option<Cow<'a, str>> },
    /// Anything else, as a sentence saying what it was.
    Note(String),
}

/// Image types every provider here that takes images in a result accepts
/// (Anthropic, OpenAI Responses; Gemini is sent none, see
/// [`gemini::reply`]).
const IMAGE_TYPES: &[&str] = &["image/jpeg", "image/png", "image/gif", "image/webp"];

/// What a failed result with no text to read says instead (the Anthropic
/// API refuses an empty text block, and an empty answer reads as success).
pub(crate) const FAILED_WITHOUT_MESSAGE: &str = "(the tool failed without a message)";

pub(crate) fn carry(content: &crate::Content) -> Carried<'_> {
    use crate::Content;
    match content {
        Content::Text { text } => Carried::Text(text),
        // An image of no bytes the APIs refuse ("image cannot be empty").
        Content::Image { data, mime_type } if data.is_empty() => {
            Carried::Note(format!("[an image ({}) with no data]", clip(mime_type)))
        }
        Content::Image { data, mime_type } if IMAGE_TYPES.contains(&mime_type.as_str()) => {
            Carried::Image { data, mime_type }
        }
        Content::Image { mime_type, .. } => {
            Carried::Note(format!("[an image ({}) that this format cannot show]", clip(mime_type)))
        }
        Content::Document {
            data,
            mime_type,
            title: name,
        } if mime_type == "application/pdf" && data.is_empty() => {
            Carried::Note(format!("[a PDF document{} with no data]", quoted(cut_title(name))))
        }
        Content::Document {
            data,
            mime_type,
            title: name,
        } if mime_type == "application/pdf" => Carried::Pdf {
            data,
            title: cut_title(name),
        },
        Content::Document {
            mime_type, title: name, ..
        } if content.is_text_document() => match content.document_text() {
            Some(text) => Carried::TextDocument {
                text,
                title: cut_title(name),
            },
            None => Carried::Note(format!("[a {} document that is not valid UTF-8 text]", clip(mime_type))),
        },
        // What a server named its document is quoted cut, as any name.
        Content::Document {
            mime_type, title: name, ..
        } => Carried::Note(format!(
            "[a document{} ({}) that this format cannot show]",
            quoted(cut_title(name)),
            clip(mime_type)
        )),
    }
}

/// A document's title, cut as any name is.
fn cut_title(title: &Option<String>) -> Option<Cow<'_, str>> {
    title.as_deref().map(clip)
}

/// ` "title"` for a block that has one, else nothing.
fn quoted(title: Option<Cow<'_, str>>) -> String {
    title.map(|t| format!(" \"{t}\"")).unwrap_or_default()
}

/// The content of a result as text, for formats whose results are text
/// only: text documents are inlined (after their title), other blocks
/// become a short note.
pub(crate) fn text_only(result: &ToolResult) -> String {
    let parts: Vec<String> = result.content.iter().map(block_text).collect();
    parts.join("\n")
}

/// One block as [`text_only`] words it.
pub(crate) fn block_text(block: &crate::Content) -> String {
    match carry(block) {
        Carried::Text(text) => text.to_owned(),
        Carried::TextDocument {
            text,
            title: Some(title),
        } => format!("{title}:\n{text}"),
        Carried::TextDocument { text, title: None } => text,
        Carried::Image { mime_type, .. } => format!("[an image ({mime_type}) that this format cannot show]"),
        Carried::Pdf { title, .. } => format!("[a PDF document{} that this format cannot show]", quoted(title)),
        Carried::Note(note) => note,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::Outcome;

    fn result(id: &str) -> ToolResult {
        ToolResult::failure("t", Some(id.to_owned()), Outcome::ToolFailed, String::new())
    }

    #[test]
    fn a_note_quotes_a_document_s_title_and_type_cut() {
        let long = "x".repeat(100_000);
        let document = crate::Content::Document {
            data: String::new(),
            mime_type: format!("application/{long}"),
            title: Some(long.clone()),
        };
        let Carried::Note(note) = carry(&document) else {
            panic!("a document of an unknown type is a note")
        };
        assert!(note.len() < 400, "{} bytes", note.len());
        let image = crate::Content::Image {
            data: String::new(),
            mime_type: format!("image/{long}"),
        };
        let Carried::Note(note) = carry(&image) else {
            panic!("an image of an unknown type is a note")
        };
        assert!(note.len() < 400, "{} bytes", note.len());
    }

    /// A title is any text a tool or a server chose (a mounted resource's
    /// `data:` URI): each format that sends it sends it cut.
    #[test]
    fn a_document_s_title_is_cut_wherever_it_is_sent() {
        use crate::output::{Content, IntoToolOutput as _};
        let long = format!("data:text/plain;base64,{}", "QUJD".repeat(100_000));
        let output = vec![
            Content::document(b"%PDF-1.4", "application/pdf", Some(long.clone())),
            Content::document(b"text", "text/plain", Some(long.clone())),
            Content::document(b"%PDF-1.4", "application/pdf", Some(format!("a\n{long}"))),
        ]
        .into_tool_output();
        let result = ToolResult::new("t", Some("c1".into()), output);
        let mut failed = result.clone();
        failed.is_error = true;
        let replies = [
            anthropic::reply(std::slice::from_ref(&result)).unwrap(),
            anthropic::reply(std::slice::from_ref(&failed)).unwrap(),
            Value::Array(openai::chat_reply(std::slice::from_ref(&result)).unwrap()),
            Value::Array(openai::responses_reply(std::slice::from_ref(&result)).unwrap()),
            gemini::reply(std::slice::from_ref(&result)).unwrap(),
            mcp::reply(&result),
        ];
        for reply in replies {
            let text = reply.to_string();
            assert!(text.len() < 2_000, "{} bytes: {}", text.len(), &text[..300]);
            // The marker says how long it was (MCP's uri spells it with `_`).
            assert!(text.contains("cut") && text.contains("400023"), "{text}");
        }
        // Cut, its line breaks shown, never starting a line of their own.
        let Carried::Pdf { title: Some(title), .. } = carry(&result.content[2]) else {
            panic!("a PDF")
        };
        assert!(title.starts_with("a\\ndata:"), "{title}");
    }

    #[test]
    fn reply_ids_must_be_present_and_distinct() {
        assert_eq!(result_ids(&[result("a"), result("b")]).unwrap(), ["a", "b"]);
        let twice = result_ids(&[result("a"), result("a")]).unwrap_err();
        assert_eq!(twice.kind(), FormatErrorKind::DuplicateId);
        assert!(twice.to_string().contains("`a`"), "{twice}");
        let none = ToolResult::failure("t", None, Outcome::ToolFailed, String::new());
        assert_eq!(result_ids(&[none]).unwrap_err().kind(), FormatErrorKind::MissingId);
        // An id quoted in an error is cut, however long it came.
        let long = "i".repeat(100_000);
        let twice = result_ids(&[result(&long), result(&long)]).unwrap_err();
        assert!(twice.to_string().len() < 200, "{twice}");
        let calls = check_call_ids([long.as_str(), long.as_str()].into_iter()).unwrap_err();
        assert!(calls.to_string().len() < 200, "{calls}");
        // A reply of nothing answers nothing; the providers refuse it.
        for reply in [
            anthropic::reply(&[]),
            anthropic::reply_with_notice(&[], "now"),
            gemini::reply(&[]),
        ] {
            assert_eq!(reply.unwrap_err().kind(), FormatErrorKind::NoResults);
        }
    }

    #[test]
    fn format_names_parse() {
        assert_eq!(Format::from_name("openai-chat", true), Some(Format::OpenAiChatStrict));
        assert_eq!(Format::from_name("gemini", true), None);
        assert_eq!(Format::ALL.len(), 8);
        for (i, f) in Format::ALL.iter().enumerate() {
            assert_eq!(f.slot(), i);
        }
    }
}
