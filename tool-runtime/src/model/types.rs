//! The provider-neutral transcript and one turn's request and response.

use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::call::{CallArguments, ToolCall};
use crate::tool::ToolDefinition;

/// Who wrote a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user, or the loop answering tool calls.
    User,
    /// The model.
    Assistant,
}

/// One message of a transcript. Serializable: save it, pass it back to
/// continue the conversation, render it for any provider.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Message {
    /// Who wrote it.
    pub role: Role,
    /// Its blocks, in order.
    pub content: Vec<Block>,
}

impl Message {
    /// A user message of one text block.
    pub fn user(text: impl Into<String>) -> Self {
        Message {
            role: Role::User,
            content: vec![Block::Text { text: text.into() }],
        }
    }

    /// A message of these blocks.
    pub fn new(role: Role, content: Vec<Block>) -> Self {
        Message { role, content }
    }

    /// Its text blocks concatenated as they are, with nothing between them
    /// (no tool calls, results or thinking).
    pub fn text(&self) -> String {
        let texts: Vec<&str> = self
            .content
            .iter()
            .filter_map(|b| match b {
                Block::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        texts.concat()
    }

    /// Its tool calls, in order.
    pub fn tool_uses(&self) -> impl Iterator<Item = &ToolUse> {
        self.content.iter().filter_map(|b| match b {
            Block::ToolUse(u) => Some(u),
            _ => None,
        })
    }

    /// Its tool results, in order.
    pub fn tool_results(&self) -> impl Iterator<Item = &ToolResultBlock> {
        self.content.iter().filter_map(|b| match b {
            Block::ToolResult(r) => Some(r),
            _ => None,
        })
    }
}

/// One block of a message.
///
/// Read from JSON by its `type`: a block of a type this crate models whose
/// fields do not fit is an error naming the type (never a [`Provider`]
/// block, which would drop a call or a result from later requests); a
/// block of any other type is kept as a [`Provider`] block.
///
/// [`Provider`]: Block::Provider
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Block {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// A tool call the model made.
    ToolUse(ToolUse),
    /// The answer to one tool call.
    ToolResult(ToolResultBlock),
    /// Thinking: Anthropic's extended thinking, sent back unchanged with
    /// its signature. A block without a signature is no Anthropic
    /// thinking: that API refuses it, so it is left out of its requests;
    /// the Chat Completions client sends its text back as
    /// `reasoning_content`, as it did with the reasoning it read before
    /// [`Reasoning`](Block::Reasoning) blocks (transcripts saved then hold
    /// such blocks).
    Thinking {
        /// The thinking text.
        thinking: String,
        /// The signature the API checks when the block comes back; empty
        /// (and left out of the JSON) for a server that signs none.
        #[serde(default, skip_serializing_if = "String::is_empty")]
        signature: String,
    },
    /// Thinking the API redacted; sent back unchanged.
    RedactedThinking {
        /// The opaque data.
        data: String,
    },
    /// The reasoning an OpenAI-compatible server returned beside its
    /// answer, with the field it came in: `reasoning_content` (DeepSeek,
    /// Kimi, llama.cpp) or `reasoning` (Groq, vLLM, OpenRouter). The Chat
    /// Completions client sends it back in that field only, since a server
    /// refuses a field it does not know (Groq refuses `reasoning_content`),
    /// and DeepSeek and Kimi refuse a turn of tool calls sent back without
    /// it; the Anthropic client leaves it out.
    Reasoning {
        /// The reasoning text.
        text: String,
        /// The message field it came in, and goes back in.
        field: String,
    },
    /// A provider block this crate does not model (Anthropic's server tool
    /// blocks, say), kept as sent so it goes back to the same provider
    /// unchanged; other providers skip it.
    #[serde(untagged)]
    Provider(Value),
}

impl<'de> Deserialize<'de> for Block {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Block::from_json(Value::deserialize(deserializer)?).map_err(de::Error::custom)
    }
}

impl Block {
    /// A block read from its JSON, by its `type`; see [`Block`].
    fn from_json(value: Value) -> Result<Block, String> {
        #[derive(Deserialize)]
        struct Text {
            text: String,
        }
        #[derive(Deserialize)]
        struct Thinking {
            thinking: String,
            #[serde(default)]
            signature: String,
        }
        #[derive(Deserialize)]
        struct Redacted {
            data: String,
        }
        #[derive(Deserialize)]
        struct Reasoning {
            text: String,
            field: String,
        }
        fn read<T: serde::de::DeserializeOwned>(value: Value) -> serde_json::Result<T> {
            serde_json::from_value(value)
        }
        let Some(tag) = value.get("type").and_then(Value::as_str).map(str::to_owned) else {
            return Ok(Block::Provider(value));
        };
        let block = match tag.as_str() {
            "text" => read(value).map(|b: Text| Block::Text { text: b.text }),
            "tool_use" => read(value).map(Block::ToolUse),
            "tool_result" => read(value).map(Block::ToolResult),
            "thinking" => read(value).map(|b: Thinking| Block::Thinking {
                thinking: b.thinking,
                signature: b.signature,
            }),
            "redacted_thinking" => read(value).map(|b: Redacted| Block::RedactedThinking { data: b.data }),
            "reasoning" => read(value).map(|b: Reasoning| Block::Reasoning {
                text: b.text,
                field: b.field,
            }),
            _ => return Ok(Block::Provider(value)),
        };
        block.map_err(|e| format!("a `{tag}` block: {e}"))
    }

    /// Whether the block is reasoning from an OpenAI-compatible server (a
    /// [`Reasoning`](Block::Reasoning) block, or a thinking block without
    /// a signature), which no other provider takes.
    /// Read by the HTTP clients (feature `models`).
    #[cfg_attr(not(feature = "models"), allow(dead_code))]
    pub(crate) fn is_unsigned_reasoning(&self) -> bool {
        match self {
            Block::Thinking { signature, .. } => signature.is_empty(),
            Block::Reasoning { .. } => true,
            _ => false,
        }
    }
}

/// A tool call the model made.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolUse {
    /// The provider's id (`toolu_...`, `call_...`).
    pub id: String,
    /// The tool's name as the model wrote it.
    pub name: String,
    /// The arguments as a JSON value (`{}` when the text sent was no JSON,
    /// and when a transcript read back has none).
    #[serde(default = "empty_object")]
    pub input: Value,
    /// The argument text exactly as sent, for providers that send text
    /// (OpenAI); the binder reads it, and it goes back unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_arguments: Option<String>,
    /// Fields of the provider's call that this crate does not model but
    /// that must go back with it, as one JSON object of those fields (the
    /// Chat Completions client keeps `extra_content`, where Gemini puts
    /// the call's thought signature); `None` when there are none. Opaque:
    /// only the client that read them sends them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra: Option<Value>,
}

/// The registry call for a model's tool call, to run it yourself (the
/// calls a deferred run waits for, say): raw text when the provider sent
/// text (so the binder reports bad JSON), else the JSON value.
impl From<&ToolUse> for ToolCall {
    fn from(call: &ToolUse) -> Self {
        let arguments = match &call.raw_arguments {
            Some(text) => CallArguments::Text(text.clone()),
            None => CallArguments::Json(call.input.clone()),
        };
        ToolCall::new(call.name.clone(), arguments).with_id(call.id.clone())
    }
}

impl From<ToolUse> for ToolCall {
    fn from(call: ToolUse) -> Self {
        let arguments = match call.raw_arguments {
            Some(text) => CallArguments::Text(text),
            None => CallArguments::Json(call.input),
        };
        ToolCall::new(call.name, arguments).with_id(call.id)
    }
}

impl ToolUse {
    /// A call with JSON arguments.
    pub fn new(id: impl Into<String>, name: impl Into<String>, input: Value) -> Self {
        ToolUse {
            id: id.into(),
            name: name.into(),
            input,
            raw_arguments: None,
            extra: None,
        }
    }

    /// A call whose arguments came as text: kept as sent (the registry
    /// binds that text, and says what is wrong with it), and parsed when
    /// it is a JSON object, or a JSON string holding one (arguments
    /// encoded twice); `{}` otherwise.
    pub fn from_text(id: impl Into<String>, name: impl Into<String>, text: impl Into<String>) -> Self {
        let text = text.into();
        let input = match serde_json::from_str::<Value>(&text) {
            Ok(Value::String(inner)) => serde_json::from_str::<Value>(&inner).ok(),
            parsed => parsed.ok(),
        }
        .filter(Value::is_object)
        .unwrap_or_else(|| Value::Object(Default::default()));
        ToolUse {
            id: id.into(),
            name: name.into(),
            input,
            raw_arguments: Some(text),
            extra: None,
        }
    }

    /// The argument text to send back in the transcript: as received when
    /// it is a JSON object, else the parsed arguments. Servers that speak
    /// the OpenAI API (vLLM among them) parse every earlier call's
    /// arguments and refuse a request whose history holds text that is no
    /// JSON object, so a model's malformed arguments go back as what they
    /// were read as; the tool's result already told the model what was
    /// wrong with them.
    pub fn arguments_text(&self) -> String {
        match &self.raw_arguments {
            Some(text) if serde_json::from_str::<Value>(text).is_ok_and(|v| v.is_object()) => text.clone(),
            _ => self.input.to_string(),
        }
    }
}

/// The answer to one tool call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolResultBlock {
    /// The id of the call it answers.
    pub tool_use_id: String,
    /// The blocks the model reads, as Anthropic content blocks (`text`,
    /// `image`, `document`); providers that take text only get the text.
    /// Read from JSON as the Messages API takes it: a list of blocks, a
    /// string (one text block), or nothing (no blocks).
    #[serde(default, deserialize_with = "result_content")]
    pub content: Vec<Value>,
    /// The call failed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
}

/// `{}`: the arguments of a call read back without its `input`.
fn empty_object() -> Value {
    Value::Object(Default::default())
}

/// A tool result's `content` as the Messages API takes it: a list of
/// blocks, a string (one text block), or `null` (no blocks).
fn result_content<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<Value>, D::Error> {
    match Value::deserialize(deserializer)? {
        Value::Array(blocks) => Ok(blocks),
        Value::String(text) => Ok(vec![serde_json::json!({"type": "text", "text": text})]),
        Value::Null => Ok(Vec::new()),
        _ => Err(de::Error::custom("`content` is neither a list of blocks nor a string")),
    }
}

impl ToolResultBlock {
    /// A result of one text block.
    pub fn text(tool_use_id: impl Into<String>, text: impl Into<String>, is_error: bool) -> Self {
        ToolResultBlock {
            tool_use_id: tool_use_id.into(),
            content: vec![serde_json::json!({"type": "text", "text": text.into()})],
            is_error,
        }
    }

    /// The content as plain text; blocks that are not text become a note.
    pub fn to_text(&self) -> String {
        let parts: Vec<String> = self
            .content
            .iter()
            .map(|block| match block["type"].as_str() {
                Some("text") => block["text"].as_str().unwrap_or_default().to_owned(),
                Some("document") if block["source"]["type"] == "text" => {
                    let text = block["source"]["data"].as_str().unwrap_or_default();
                    match block["title"].as_str() {
                        Some(title) => format!("{title}:\n{text}"),
                        None => text.to_owned(),
                    }
                }
                Some(kind) => format!("[a {kind} block that this format cannot show]"),
                None => String::new(),
            })
            .collect();
        parts.join("\n")
    }
}

/// Token counts of one turn, or summed over a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Usage {
    /// Input tokens billed at the normal rate.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Input tokens written to the prompt cache.
    #[serde(default)]
    pub cache_creation_input_tokens: u64,
    /// Input tokens read from the prompt cache.
    #[serde(default)]
    pub cache_read_input_tokens: u64,
}

impl Usage {
    /// Usage of `input` and `output` tokens.
    pub fn new(input_tokens: u64, output_tokens: u64) -> Self {
        Usage {
            input_tokens,
            output_tokens,
            ..Usage::default()
        }
    }

    /// Every input token (cached or not) plus the output tokens: what a
    /// token budget counts.
    pub fn total(&self) -> u64 {
        // Counts come from a server: summed saturating, never overflowing.
        self.input_tokens
            .saturating_add(self.cache_creation_input_tokens)
            .saturating_add(self.cache_read_input_tokens)
            .saturating_add(self.output_tokens)
    }
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, other: Usage) {
        self.input_tokens = self.input_tokens.saturating_add(other.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(other.output_tokens);
        self.cache_creation_input_tokens = self
            .cache_creation_input_tokens
            .saturating_add(other.cache_creation_input_tokens);
        self.cache_read_input_tokens = self
            .cache_read_input_tokens
            .saturating_add(other.cache_read_input_tokens);
    }
}

/// Why the model ended its turn.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ModelStop {
    /// It finished (Anthropic `end_turn`, OpenAI `stop`).
    EndTurn,
    /// It wants tools run (`tool_use`, `tool_calls`).
    ToolUse,
    /// It ran out of output tokens (`max_tokens`, `length`).
    MaxTokens,
    /// Its context window filled up while it wrote (Anthropic
    /// `model_context_window_exceeded`): cut off as by `MaxTokens`.
    ContextWindowExceeded,
    /// It wrote one of the stop sequences.
    StopSequence(Option<String>),
    /// A long turn paused (Anthropic `pause_turn`); send it back to go on.
    PauseTurn,
    /// It declined (Anthropic `refusal`, OpenAI `content_filter`).
    Refusal,
    /// A reason this crate does not know, as sent. It may be a new kind of
    /// cut-off, so a turn that stops so is never taken as whole: the agent
    /// loop runs none of its tool calls a stream had not already shown
    /// complete.
    Other(String),
}

impl ModelStop {
    /// The turn may have been cut off (max_tokens, a full context window,
    /// a refusal, a reason this crate does not know): its last call may be
    /// incomplete, so none of its calls is known to be whole.
    pub(crate) fn interrupts(&self) -> bool {
        matches!(
            self,
            ModelStop::MaxTokens | ModelStop::ContextWindowExceeded | ModelStop::Refusal | ModelStop::Other(_)
        )
    }
}

/// How the model may use tools.
///
/// A forced choice (`Any`, `Tool`) holds for a turn that answers a user's
/// message; a turn that answers tool results is sent `Auto`, so the model
/// can end the run with text (forced on every turn, a run could only end
/// at a limit). `None` holds on every turn.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolChoice {
    /// It decides (the default).
    #[default]
    Auto,
    /// It must call some tool (OpenAI `required`).
    Any,
    /// It may not call tools.
    None,
    /// It must call this tool.
    Tool(String),
}

/// What one turn sends: the transcript so far and the tools offered, in a
/// stable order. Client options (model, system prompt, sampling) live on
/// the client.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct ModelRequest<'a> {
    /// The conversation so far; it ends with a user message (or with an
    /// assistant message paused by `pause_turn`).
    pub messages: &'a [Message],
    /// The tools offered, in the order to send them.
    pub tools: &'a [&'a ToolDefinition],
}

impl<'a> ModelRequest<'a> {
    /// A request of these messages and tools.
    pub fn new(messages: &'a [Message], tools: &'a [&'a ToolDefinition]) -> Self {
        ModelRequest { messages, tools }
    }

    /// The tool choice this turn is sent, given the client's `choice` (see
    /// [`ToolChoice`]): `Auto` in place of a forced one when the last
    /// message carries tool results. Read by the HTTP clients.
    #[cfg(feature = "models")]
    pub(crate) fn tool_choice(&self, choice: &ToolChoice) -> ToolChoice {
        let forced = matches!(choice, ToolChoice::Any | ToolChoice::Tool(_));
        let answers_results = self
            .messages
            .last()
            .is_some_and(|last| last.role == Role::User && last.tool_results().next().is_some());
        if forced && answers_results {
            ToolChoice::Auto
        } else {
            choice.clone()
        }
    }
}

/// The model's answer to one turn.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ModelResponse {
    /// The assistant message's blocks.
    pub content: Vec<Block>,
    /// Why it stopped.
    pub stop: ModelStop,
    /// The turn's token counts.
    pub usage: Usage,
    /// The provider's id of the response, when it gave one.
    pub id: Option<String>,
}

impl ModelResponse {
    /// A response of these blocks.
    pub fn new(content: Vec<Block>, stop: ModelStop) -> Self {
        ModelResponse {
            content,
            stop,
            usage: Usage::default(),
            id: None,
        }
    }

    /// Sets the token counts.
    pub fn with_usage(mut self, usage: Usage) -> Self {
        self.usage = usage;
        self
    }

    /// The tool calls, in order.
    pub fn tool_uses(&self) -> impl Iterator<Item = &ToolUse> {
        self.content.iter().filter_map(|b| match b {
            Block::ToolUse(u) => Some(u),
            _ => None,
        })
    }
}

/// What a streaming model reports while a turn arrives.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum StreamEvent {
    /// A piece of text.
    Text(String),
    /// A piece of thinking.
    Thinking(String),
    /// A tool call whose block is complete; the loop may start it at once.
    ToolUse(ToolUse),
    /// A thinking block (or a redacted one, or an OpenAI-compatible
    /// server's reasoning) that is complete, signature included where the
    /// provider signs one: a turn that ends before its message is whole
    /// keeps it before the calls it started, as the API wants them sent
    /// back.
    ThinkingDone(Block),
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn usage_from_a_server_saturates_instead_of_overflowing() {
        let mut usage = Usage::new(u64::MAX, 1);
        assert_eq!(usage.total(), u64::MAX);
        usage += Usage::new(5, u64::MAX);
        assert_eq!((usage.input_tokens, usage.output_tokens), (u64::MAX, u64::MAX));
    }

    #[test]
    fn arguments_go_back_as_a_json_object_whatever_the_model_sent() {
        let cases = [
            // As sent: byte for byte, spacing kept.
            ("{\"a\": 1}", json!({"a": 1}), "{\"a\": 1}"),
            // Cut off, or no JSON: what they were read as.
            ("{\"a\": 1", json!({}), "{}"),
            ("", json!({}), "{}"),
            ("[1]", json!({}), "{}"),
            // Encoded twice: read through, sent back once.
            ("\"{\\\"a\\\": 1}\"", json!({"a": 1}), "{\"a\":1}"),
        ];
        for (sent, input, back) in cases {
            let call = ToolUse::from_text("c1", "t", sent);
            assert_eq!(call.input, input, "{sent}");
            assert_eq!(call.arguments_text(), back, "{sent}");
            assert_eq!(
                call.raw_arguments.as_deref(),
                Some(sent),
                "the registry binds the text as sent"
            );
        }
    }

    #[test]
    fn blocks_serialize_tagged_and_unknown_ones_pass_through() {
        let message = Message::new(
            Role::Assistant,
            vec![
                Block::Text { text: "Hi".into() },
                Block::ToolUse(ToolUse::from_text("c1", "add", "{\"a\":1}")),
                Block::Provider(
                    serde_json::json!({"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "rust"}}),
                ),
            ],
        );
        let value = serde_json::to_value(&message).unwrap();
        assert_eq!(value["role"], "assistant");
        assert_eq!(value["content"][0], serde_json::json!({"type": "text", "text": "Hi"}));
        assert_eq!(value["content"][1]["type"], "tool_use");
        assert_eq!(value["content"][1]["raw_arguments"], "{\"a\":1}");
        assert_eq!(value["content"][2]["type"], "server_tool_use");
        let back: Message = serde_json::from_value(value).unwrap();
        assert_eq!(back, message);
    }

    /// Every block this crate models reads back as itself, whatever the
    /// JSON that was passed around; one of an unknown type is kept as a
    /// provider block.
    #[test]
    fn every_block_round_trips() {
        let mut call = ToolUse::from_text("c1", "add", "{\"a\": 1}");
        call.extra = Some(json!({"extra_content": {"k": 1}}));
        let blocks = vec![
            Block::Text { text: "Hi".into() },
            Block::ToolUse(call),
            Block::ToolUse(ToolUse::new("c2", "add", json!({}))),
            Block::ToolResult(ToolResultBlock::text("c1", "1", true)),
            Block::ToolResult(ToolResultBlock {
                tool_use_id: "c2".into(),
                content: Vec::new(),
                is_error: false,
            }),
            Block::Thinking {
                thinking: "Hmm.".into(),
                signature: "sig".into(),
            },
            Block::RedactedThinking { data: "xyz".into() },
            Block::Reasoning {
                text: "Add them.".into(),
                field: "reasoning".into(),
            },
            Block::Provider(json!({"type": "server_tool_use", "id": "s1", "input": {}})),
            Block::Provider(json!({"no_type": true})),
        ];
        let message = Message::new(Role::Assistant, blocks);
        let text = serde_json::to_string(&message).unwrap();
        let back: Message = serde_json::from_str(&text).unwrap();
        assert_eq!(back, message, "{text}");
        assert_eq!(
            serde_json::to_value(&message.content[7]).unwrap(),
            json!({"type": "reasoning", "text": "Add them.", "field": "reasoning"})
        );
    }

    /// A transcript passed back in the Messages API's own forms keeps its
    /// calls and results: a result's `content` as a string is one text
    /// block, a result without `content` has none, and a call without
    /// `input` has `{}`. A block of a known type whose fields do not fit is
    /// an error that names the type, never a provider block that every
    /// later request would drop.
    #[test]
    fn calls_and_results_in_the_api_s_forms_are_read_and_bad_ones_refused() {
        let read = |block: Value| serde_json::from_value::<Block>(block);
        assert_eq!(
            read(json!({"type": "tool_result", "tool_use_id": "x", "content": "15 degrees"})).unwrap(),
            Block::ToolResult(ToolResultBlock::text("x", "15 degrees", false))
        );
        let Block::ToolResult(empty) =
            read(json!({"type": "tool_result", "tool_use_id": "x", "is_error": true})).unwrap()
        else {
            panic!("not a result");
        };
        assert_eq!((empty.content.len(), empty.is_error), (0, true));
        assert_eq!(
            read(json!({"type": "tool_use", "id": "t1", "name": "glob"})).unwrap(),
            Block::ToolUse(ToolUse::new("t1", "glob", json!({})))
        );
        let bad = [
            (
                json!({"type": "tool_result", "content": "15"}),
                "`tool_result`",
                "tool_use_id",
            ),
            (
                json!({"type": "tool_result", "tool_use_id": "x", "content": 15}),
                "`tool_result`",
                "content",
            ),
            (
                json!({"type": "tool_use", "name": "glob", "input": {}}),
                "`tool_use`",
                "id",
            ),
            (json!({"type": "text"}), "`text`", "text"),
            (json!({"type": "thinking", "signature": "s"}), "`thinking`", "thinking"),
            (json!({"type": "reasoning", "text": "t"}), "`reasoning`", "field"),
        ];
        for (block, tag, field) in bad {
            let error = read(block.clone()).unwrap_err().to_string();
            assert!(error.contains(tag) && error.contains(field), "{block}: {error}");
            let message = json!({"role": "assistant", "content": [block]});
            assert!(serde_json::from_value::<Message>(message).is_err());
        }
    }

    /// Reasoning without a signature and a call's extra fields survive a
    /// transcript saved and read back; a signed block and a call without
    /// extra fields serialize as they always did.
    #[test]
    fn unsigned_thinking_and_a_call_s_extra_fields_round_trip() {
        let mut call = ToolUse::from_text("c1", "add", "{}");
        call.extra = Some(json!({"extra_content": {"google": {"thought_signature": "c2ln"}}}));
        let reasoning = Block::Thinking {
            thinking: "Add them.".into(),
            signature: String::new(),
        };
        let message = Message::new(Role::Assistant, vec![reasoning, Block::ToolUse(call)]);
        let value = serde_json::to_value(&message).unwrap();
        assert_eq!(
            value["content"][0],
            json!({"type": "thinking", "thinking": "Add them."})
        );
        assert_eq!(
            value["content"][1]["extra"],
            json!({"extra_content": {"google": {"thought_signature": "c2ln"}}})
        );
        let back: Message = serde_json::from_value(value).unwrap();
        assert_eq!(back, message);
        assert!(back.content[0].is_unsigned_reasoning());

        let signed = Block::Thinking {
            thinking: "Add them.".into(),
            signature: "sig-1".into(),
        };
        assert_eq!(
            serde_json::to_value(&signed).unwrap(),
            json!({"type": "thinking", "thinking": "Add them.", "signature": "sig-1"})
        );
        assert!(!signed.is_unsigned_reasoning());
        let plain = serde_json::to_value(ToolUse::new("c1", "add", json!({}))).unwrap();
        assert_eq!(plain, json!({"id": "c1", "name": "add", "input": {}}));
    }
}
