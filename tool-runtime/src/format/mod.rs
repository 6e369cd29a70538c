//! Provider wire formats: tool definitions out, calls in, results out.
//!
//! One module a provider: [`anthropic`], [`openai`] (Chat Completions and
//! Responses), [`gemini`], [`mcp`]. Every definition is rendered from the
//! tool's one cached schema and kept, so listing definitions builds no schema
//! per call; [`strict`] holds the schema rewrites the strict variants need.

use std::collections::HashSet;
use std::fmt;
use std::sync::OnceLock;

use serde_json::Value;

use crate::registry::ToolRegistry;
use crate::result::ToolResult;
use crate::tool::ToolDefinition;

pub mod anthropic;
pub mod gemini;
pub mod mcp;
pub mod openai;
pub mod strict;

/// A provider's format for tool definitions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Format {
    /// Anthropic Messages: `{name, description, input_schema}`.
    Anthropic,
    /// Anthropic with `strict: true` and a schema strict tool use accepts.
    AnthropicStrict,
    /// OpenAI Chat Completions: `{type: "function", function: {...}}`.
    OpenAiChat,
    /// OpenAI Chat Completions with `strict: true` (structured outputs).
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

    fn slot(self) -> usize {
        self as usize
    }
}

/// One rendered definition per format, made on first use.
#[derive(Debug, Default)]
pub(crate) struct RenderCache {
    slots: [OnceLock<Value>; 8],
}

impl ToolDefinition {
    /// This tool's definition in `format`, rendered once and kept.
    pub fn render(&self, format: Format) -> &Value {
        self.rendered.slots[format.slot()].get_or_init(|| match format {
            Format::Anthropic => anthropic::definition(self, false),
            Format::AnthropicStrict => anthropic::definition(self, true),
            Format::OpenAiChat => openai::chat_definition(self, false),
            Format::OpenAiChatStrict => openai::chat_definition(self, true),
            Format::OpenAiResponses => openai::responses_definition(self, false),
            Format::OpenAiResponsesStrict => openai::responses_definition(self, true),
            Format::Gemini => gemini::declaration(self),
            Format::Mcp => mcp::tool(self),
        })
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

impl ToolRegistry {
    /// The selected tools' definitions in `format`, in registration order,
    /// as the request's `tools` array carries them. For Gemini this is one
    /// `{functionDeclarations: [...]}` object per request (wrap it in the
    /// request's `tools` array).
    pub fn tool_definitions(&self, format: Format, selection: &Selection) -> Value {
        let rendered: Vec<Value> = self
            .definitions()
            .filter(|d| selection.includes(d))
            .map(|d| d.render(format).clone())
            .collect();
        match format {
            Format::Gemini => serde_json::json!({ "functionDeclarations": rendered }),
            _ => Value::Array(rendered),
        }
    }
}

/// A provider message whose tool calls or results do not fit together.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FormatError {
    message: String,
}

impl FormatError {
    pub(crate) fn new(message: impl Into<String>) -> Self {
        FormatError {
            message: message.into(),
        }
    }
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for FormatError {}

/// Puts `results` in the order of `call_ids`, one result per call: an id
/// that appears twice, a call without a result or a result for no call is
/// an error naming the id.
pub fn order_results(call_ids: &[String], results: &[ToolResult]) -> Result<Vec<ToolResult>, FormatError> {
    let mut seen = HashSet::new();
    for id in call_ids {
        if !seen.insert(id.as_str()) {
            return Err(FormatError::new(format!("the tool call id `{id}` appears twice")));
        }
    }
    let mut by_id = std::collections::HashMap::new();
    for result in results {
        let Some(id) = result.call_id.as_deref() else {
            return Err(FormatError::new(format!(
                "a result of `{}` has no call id to answer",
                result.tool
            )));
        };
        if by_id.insert(id, result).is_some() {
            return Err(FormatError::new(format!("two results answer the call id `{id}`")));
        }
        if !seen.contains(id) {
            return Err(FormatError::new(format!(
                "a result answers `{id}`, which no tool call has"
            )));
        }
    }
    call_ids
        .iter()
        .map(|id| {
            by_id
                .get(id.as_str())
                .map(|r| (*r).clone())
                .ok_or_else(|| FormatError::new(format!("the tool call `{id}` has no result")))
        })
        .collect()
}

/// Checks that call ids are present and distinct.
pub(crate) fn check_call_ids<'a>(ids: impl Iterator<Item = &'a str>) -> Result<(), FormatError> {
    let mut seen = HashSet::new();
    for id in ids {
        if id.is_empty() {
            return Err(FormatError::new("a tool call has an empty id"));
        }
        if !seen.insert(id) {
            return Err(FormatError::new(format!("the tool call id `{id}` appears twice")));
        }
    }
    Ok(())
}

/// The content of a result as text, for formats whose results are text
/// only: non-text blocks become a short note.
pub(crate) fn text_only(result: &ToolResult) -> String {
    let parts: Vec<String> = result
        .content
        .iter()
        .map(|block| match block {
            crate::Content::Text { text } => text.clone(),
            crate::Content::Image { mime_type, .. } => format!("[an image ({mime_type}) is not shown in this format]"),
            crate::Content::Document { mime_type, title, .. } => format!(
                "[a document{} ({mime_type}) is not shown in this format]",
                title.as_ref().map(|t| format!(" \"{t}\"")).unwrap_or_default()
            ),
        })
        .collect();
    parts.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::Outcome;

    fn result(id: &str) -> ToolResult {
        let mut r = ToolResult::failure("t", Some(id.to_owned()), Outcome::Success, String::new());
        r.is_error = false;
        r
    }

    #[test]
    fn results_are_put_in_call_order() {
        let ids = vec!["a".to_owned(), "b".to_owned()];
        let ordered = order_results(&ids, &[result("b"), result("a")]).unwrap();
        assert_eq!(ordered[0].call_id.as_deref(), Some("a"));
        assert_eq!(ordered[1].call_id.as_deref(), Some("b"));
    }

    #[test]
    fn duplicate_and_unmatched_ids_are_errors() {
        let ids = vec!["a".to_owned(), "a".to_owned()];
        assert!(order_results(&ids, &[]).unwrap_err().to_string().contains("twice"));
        let ids = vec!["a".to_owned()];
        assert!(
            order_results(&ids, &[result("z")])
                .unwrap_err()
                .to_string()
                .contains("`z`")
        );
        assert!(order_results(&ids, &[]).unwrap_err().to_string().contains("no result"));
        assert!(
            order_results(&ids, &[result("a"), result("a")])
                .unwrap_err()
                .to_string()
                .contains("two results")
        );
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
