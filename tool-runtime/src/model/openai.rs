//! A client for OpenAI Chat Completions (`POST {base}/chat/completions`),
//! which vLLM, Ollama, LM Studio and most gateways also speak. The base URL
//! conventionally ends in `/v1`.
//!
//! ```no_run
//! use tool_runtime::model::openai::OpenAi;
//! let model = OpenAi::new("gpt-4.1").base_url("http://localhost:11434/v1").streaming(true);
//! ```

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::http::{self, RetryPolicy, is_cut_short, is_whole_object, malformed};
use super::{
    Block, Message, Model, ModelError, ModelFuture, ModelRequest, ModelResponse, ModelStop, Role, StreamEvent,
    ToolChoice, ToolUse, Usage,
};
use crate::format::openai::{error_text, first_choice};
use crate::format::{Format, check_call_id};
use crate::sse::SseEvent;
use crate::text::clip;

/// The Chat Completions client. The API key comes from `OPENAI_API_KEY`
/// unless set (no `Authorization` header without one, as local servers
/// want), the base URL from `OPENAI_BASE_URL` or `https://api.openai.com/v1`.
#[derive(Clone, Debug)]
pub struct OpenAi {
    http: reqwest::Client,
    base_url: String,
    api_key: Option<String>,
    model: String,
    max_tokens: Option<u32>,
    system: Option<String>,
    temperature: Option<f64>,
    top_p: Option<f64>,
    top_k: Option<u32>,
    stop: Vec<String>,
    metadata: Option<Value>,
    store: Option<bool>,
    tool_choice: Option<ToolChoice>,
    stream: bool,
    stream_usage: bool,
    send_reasoning: bool,
    strict: bool,
    retry: RetryPolicy,
    total_timeout: Option<Duration>,
    completion_tokens_field: bool,
}

impl OpenAi {
    /// A client for `model`: no streaming, the server's default max tokens.
    pub fn new(model: impl Into<String>) -> Self {
        OpenAi {
            http: http::default_client(),
            base_url: std::env::var("OPENAI_BASE_URL").unwrap_or_else(|_| "https://api.openai.com/v1".to_owned()),
            api_key: std::env::var("OPENAI_API_KEY").ok().filter(|k| !k.is_empty()),
            model: model.into(),
            max_tokens: None,
            system: None,
            temperature: None,
            top_p: None,
            top_k: None,
            stop: Vec::new(),
            metadata: None,
            store: None,
            tool_choice: None,
            stream: false,
            stream_usage: true,
            send_reasoning: true,
            strict: false,
            retry: RetryPolicy::default(),
            total_timeout: Some(http::DEFAULT_TOTAL_TIMEOUT),
            completion_tokens_field: false,
        }
    }

    /// The base URL, up to and including `/v1`.
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = url.into();
        self
    }

    /// The API key (instead of `OPENAI_API_KEY`).
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(key.into());
        self
    }

    /// The most tokens the model may write in one turn (`max_tokens`).
    pub fn max_tokens(mut self, tokens: u32) -> Self {
        self.max_tokens = Some(tokens);
        self.completion_tokens_field = false;
        self
    }

    /// The system prompt, sent as the first message.
    pub fn system(mut self, text: impl Into<String>) -> Self {
        self.system = Some(text.into());
        self
    }

    /// Sends the limit as `max_completion_tokens`, which OpenAI's reasoning
    /// models require, instead of `max_tokens`, which more servers read.
    pub fn max_completion_tokens(mut self, tokens: u32) -> Self {
        self.max_tokens = Some(tokens);
        self.completion_tokens_field = true;
        self
    }

    /// Sampling temperature.
    pub fn temperature(mut self, value: f64) -> Self {
        self.temperature = Some(value);
        self
    }

    /// Nucleus sampling.
    pub fn top_p(mut self, value: f64) -> Self {
        self.top_p = Some(value);
        self
    }

    /// Top-k sampling: not part of OpenAI's API, but vLLM and others read it.
    pub fn top_k(mut self, value: u32) -> Self {
        self.top_k = Some(value);
        self
    }

    /// Sequences that end the turn (`stop`).
    pub fn stop_sequences<I: IntoIterator<Item = S>, S: Into<String>>(mut self, sequences: I) -> Self {
        self.stop = sequences.into_iter().map(Into::into).collect();
        self
    }

    /// Request metadata (string values). OpenAI takes metadata only for
    /// completions it stores: set [`store(true)`](Self::store) with it.
    pub fn metadata(mut self, metadata: Value) -> Self {
        self.metadata = Some(metadata);
        self
    }

    /// Whether OpenAI stores the completion (for its dashboard, evals and
    /// distillation); not sent unless set, and ignored by most other
    /// servers.
    pub fn store(mut self, store: bool) -> Self {
        self.store = Some(store);
        self
    }

    /// How the model may use tools (`Any` is sent as `required`); a forced
    /// choice is sent only on a turn that answers a user's message (see
    /// [`ToolChoice`]).
    pub fn tool_choice(mut self, choice: ToolChoice) -> Self {
        self.tool_choice = Some(choice);
        self
    }

    /// Streams responses (server-sent events, with usage in the last chunk).
    pub fn streaming(mut self, on: bool) -> Self {
        self.stream = on;
        self
    }

    /// Whether a streamed request asks for the turn's usage
    /// (`stream_options: {"include_usage": true}`; on by default). Turn it
    /// off for a server that refuses the field (Mistral answers 422
    /// `extra_forbidden`): usage then comes only from a server that sends
    /// it anyway, and is zero otherwise, so a token budget counts nothing
    /// for such turns.
    pub fn stream_usage(mut self, on: bool) -> Self {
        self.stream_usage = on;
        self
    }

    /// Whether the reasoning a server returned goes back with the
    /// assistant message on later turns, in the field it came in (on by
    /// default; see [`Block::Reasoning`]). DeepSeek and Kimi refuse a turn
    /// of tool calls sent back without it. Turn it off for a server that
    /// refuses reasoning it did not write, as one given a transcript from
    /// another provider may (Mistral refuses any field it does not know).
    pub fn send_reasoning(mut self, on: bool) -> Self {
        self.send_reasoning = on;
        self
    }

    /// Sends strict tool definitions (structured outputs).
    ///
    /// The model then sends `null` for every optional parameter it leaves
    /// unset. The agent loop reads such a `null` as "not given" by itself
    /// (see [`Model::sends_strict_tools`]); calls run through the registry
    /// by other means need one built with
    /// [`ToolRegistry::with_strict_definitions`](crate::ToolRegistry::with_strict_definitions)`(true)`
    /// (else each `null` is a warning in lenient mode, and refused in
    /// strict mode).
    pub fn strict_tools(mut self, on: bool) -> Self {
        self.strict = on;
        self
    }

    /// The retry policy.
    pub fn retry(mut self, policy: RetryPolicy) -> Self {
        self.retry = policy;
        self
    }

    /// Time limit for connecting and for each read of the response
    /// (defaults: 30 s and 600 s). A redirect is never followed: it is an
    /// error that says where it points.
    pub fn timeouts(mut self, connect: Duration, read: Duration) -> Self {
        self.http = http::client(connect, read);
        self
    }

    /// Time limit for one attempt of a request as a whole, from connecting
    /// to the last byte of the answer, streamed or not (default one hour;
    /// `None` for none). The read limit of [`timeouts`](Self::timeouts)
    /// does not end a stream that a server keeps open with comments and
    /// nothing else; this does. An attempt that runs out is a
    /// [`Timeout`](super::ModelErrorKind::Timeout) error, not tried again.
    pub fn total_timeout(mut self, limit: Option<Duration>) -> Self {
        self.total_timeout = limit;
        self
    }

    /// The JSON body of a request: what [`Model::respond`] sends.
    pub fn request_body(&self, request: &ModelRequest<'_>) -> Value {
        let mut body = Map::new();
        body.insert("model".into(), json!(self.model));
        let mut messages = Vec::new();
        if let Some(system) = &self.system {
            messages.push(json!({"role": "system", "content": system}));
        }
        for message in request.messages {
            messages.extend(message_json(message, self.send_reasoning));
        }
        body.insert("messages".into(), Value::Array(messages));
        if !request.tools.is_empty() {
            let format = if self.strict {
                Format::OpenAiChatStrict
            } else {
                Format::OpenAiChat
            };
            let tools: Vec<Value> = request.tools.iter().map(|t| crate::format::render(t, format)).collect();
            body.insert("tools".into(), Value::Array(tools));
            if let Some(choice) = &self.tool_choice {
                let choice = match request.tool_choice(choice) {
                    ToolChoice::Auto => json!("auto"),
                    ToolChoice::Any => json!("required"),
                    ToolChoice::None => json!("none"),
                    ToolChoice::Tool(name) => json!({"type": "function", "function": {"name": name}}),
                };
                body.insert("tool_choice".into(), choice);
            }
        }
        let mut put = |key: &str, value: Option<Value>| {
            if let Some(value) = value {
                body.insert(key.into(), value);
            }
        };
        let tokens_field = if self.completion_tokens_field {
            "max_completion_tokens"
        } else {
            "max_tokens"
        };
        put(tokens_field, self.max_tokens.map(|v| json!(v)));
        put("temperature", self.temperature.map(|v| json!(v)));
        put("top_p", self.top_p.map(|v| json!(v)));
        put("top_k", self.top_k.map(|v| json!(v)));
        put("stop", (!self.stop.is_empty()).then(|| json!(self.stop)));
        put("metadata", self.metadata.clone());
        put("store", self.store.map(Value::Bool));
        if self.stream {
            body.insert("stream".into(), json!(true));
            if self.stream_usage {
                body.insert("stream_options".into(), json!({"include_usage": true}));
            }
        }
        Value::Object(body)
    }

    async fn call(
        &self,
        request: ModelRequest<'_>,
        events: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<ModelResponse, ModelError> {
        let body = http::encode_body(&self.request_body(&request), request.tools)?;
        let url = http::join(&self.base_url, "chat/completions");
        let build = || {
            let mut builder = self
                .http
                .post(&url)
                .header("content-type", "application/json")
                .body(body.clone());
            if let Some(key) = &self.api_key {
                builder = builder.bearer_auth(key);
            }
            if let Some(limit) = self.total_timeout {
                builder = builder.timeout(limit);
            }
            builder
        };
        if self.stream {
            let stream: StreamState = http::stream(build, &self.retry, events).await?;
            stream.finish(events)
        } else {
            parse_response(&http::send(build, &self.retry).await?)
        }
    }
}

impl Model for OpenAi {
    fn respond<'a>(
        &'a self,
        request: ModelRequest<'a>,
        events: &'a mut (dyn FnMut(StreamEvent) + Send),
    ) -> ModelFuture<'a> {
        Box::pin(self.call(request, events))
    }

    fn sends_strict_tools(&self) -> bool {
        self.strict
    }
}

/// A transcript message as Chat Completions messages: an assistant message
/// with its `tool_calls`; a user message's tool results as one `role: "tool"`
/// message each, in order, then its text (a notice) as a user message. A
/// message's text blocks are sent as one text (what every compatible server
/// takes): a user's a blank line apart, an assistant's where a call or
/// thinking keeps them apart.
///
/// What a server returned beside the answer goes back with it: an
/// assistant's reasoning ([`Block::Reasoning`]) in the field it came in
/// (`reasoning_content`, which DeepSeek and Kimi require after a turn of
/// tool calls, or `reasoning`), and each call's [`extra`](ToolUse::extra)
/// fields (Gemini's `extra_content`) on that call. A thinking block
/// without a signature (reasoning read by an earlier version of this
/// crate) goes back as `reasoning_content`. Anthropic's signed thinking is
/// not sent. [`OpenAi::send_reasoning`] turns the reasoning off.
pub fn messages_json(message: &Message) -> Vec<Value> {
    message_json(message, true)
}

/// [`messages_json`], the reasoning sent back when `reasoning` is true.
fn message_json(message: &Message, reasoning: bool) -> Vec<Value> {
    match message.role {
        Role::Assistant => {
            let text = joined_text(message);
            let calls: Vec<Value> = message.tool_uses().map(tool_call_json).collect();
            let mut out = json!({"role": "assistant", "content": if text.is_empty() && !calls.is_empty() { Value::Null } else { json!(text) }});
            if !calls.is_empty() {
                out["tool_calls"] = Value::Array(calls);
            }
            if reasoning && let Value::Object(fields) = &mut out {
                for (field, text) in reasoning_fields(message) {
                    fields.insert(field.to_owned(), Value::String(text));
                }
            }
            vec![out]
        }
        Role::User => {
            let mut out: Vec<Value> = message
                .tool_results()
                .map(|r| {
                    // No flag says a result failed: its text does.
                    let text = if r.is_error {
                        error_text(&r.to_text())
                    } else {
                        r.to_text()
                    };
                    json!({"role": "tool", "tool_call_id": r.tool_use_id, "content": text})
                })
                .collect();
            let text = joined_text(message);
            if !text.is_empty() || out.is_empty() {
                out.push(json!({"role": "user", "content": text}));
            }
            out
        }
    }
}

/// The fields a server returns reasoning in, the one preferred first when
/// a server sends both (with the same text in each): `reasoning_content`
/// (DeepSeek, Kimi, llama.cpp) and `reasoning` (Groq, vLLM, OpenRouter).
/// Reasoning goes back in one of these only: a transcript naming any other
/// field must not write over the message's own.
const REASONING_FIELDS: &[&str] = &["reasoning_content", "reasoning"];

/// The reasoning of an assistant message to send back, by field, each
/// field's pieces joined in order.
fn reasoning_fields(message: &Message) -> Vec<(&'static str, String)> {
    let mut out: Vec<(&'static str, String)> = Vec::new();
    for block in &message.content {
        let (field, text) = match block {
            Block::Reasoning { text, field } => (field.as_str(), text),
            Block::Thinking { thinking, signature } if signature.is_empty() => ("reasoning_content", thinking),
            _ => continue,
        };
        let Some(field) = REASONING_FIELDS.iter().copied().find(|known| *known == field) else {
            continue;
        };
        match out.iter_mut().find(|(f, _)| *f == field) {
            Some((_, joined)) => joined.push_str(text),
            None if !text.is_empty() => out.push((field, text.clone())),
            None => {}
        }
    }
    out
}

/// A call as an assistant message's `tool_calls` entry, with the fields
/// kept from the server's call (its [`extra`](ToolUse::extra)) beside the
/// ones this client writes, which they never replace.
fn tool_call_json(call: &ToolUse) -> Value {
    let mut out = Map::new();
    out.insert("id".into(), json!(call.id));
    out.insert("type".into(), json!("function"));
    out.insert(
        "function".into(),
        json!({"name": call.name, "arguments": call.arguments_text()}),
    );
    if let Some(Value::Object(extra)) = &call.extra {
        for (key, value) in extra {
            out.entry(key.as_str()).or_insert_with(|| value.clone());
        }
    }
    Value::Object(out)
}

/// The fields of a server's tool call (whole, or a streamed delta of it)
/// that must go back with the call, which this client keeps: Gemini's
/// `extra_content`, which holds the call's thought signature. Any other
/// field is left, so no server is sent what another added.
const KEPT_CALL_FIELDS: &[&str] = &["extra_content"];

/// Copies the [`KEPT_CALL_FIELDS`] of a server's `call` into `extra`, a
/// later value of a field replacing an earlier one.
fn keep_call_fields(call: &Value, extra: &mut Map<String, Value>) {
    for field in KEPT_CALL_FIELDS {
        if let Some(value) = call.get(*field).filter(|v| !v.is_null()) {
            extra.insert((*field).to_owned(), value.clone());
        }
    }
}

/// A call read from the server, with the fields it keeps.
fn read_call(
    id: impl Into<String>,
    name: impl Into<String>,
    arguments: impl Into<String>,
    extra: &Map<String, Value>,
) -> ToolUse {
    let mut call = ToolUse::from_text(id, name, arguments);
    call.extra = (!extra.is_empty()).then(|| Value::Object(extra.clone()));
    call
}

/// The reasoning of a message or a delta and the field it came in: the
/// first of [`REASONING_FIELDS`] that holds a string of text; `None` when
/// none does.
fn reasoning_text(message: &Value) -> Option<(&'static str, &str)> {
    REASONING_FIELDS.iter().find_map(|field| {
        let text = message[*field].as_str().filter(|text| !text.is_empty())?;
        Some((*field, text))
    })
}

/// Reasoning as a transcript block, first in the message, with the field
/// it came in.
fn reasoning_block(text: String, field: &str) -> Block {
    Block::Reasoning {
        text,
        field: field.to_owned(),
    }
}

/// The text blocks of `message` as one text, a blank line between blocks
/// that are apart: a user's blocks always are (each its own paragraph:
/// "what is 2+2" and "and 3+3" must not read "2+2and"), an assistant's
/// when a call or thinking comes between them. An assistant's adjacent
/// text blocks are one text the provider split (Anthropic splits cited
/// text mid-sentence), joined as they are.
fn joined_text(message: &Message) -> String {
    let mut text = String::new();
    // Whether a block other than text came since the last text block.
    let mut apart = false;
    for block in &message.content {
        match block {
            Block::Text { text: piece } => {
                if !text.is_empty() && (apart || message.role == Role::User) {
                    text.push_str("\n\n");
                }
                text.push_str(piece);
                apart = false;
            }
            _ => apart = true,
        }
    }
    text
}

/// The text of a message's or a delta's `content`: a string, `null`
/// (none), or a list of parts (Mistral's reasoning models send a
/// `thinking` part, then `text`), whose `text` parts' texts are joined as
/// they are. Thinking is not the answer, and this client reads reasoning
/// from its own field only ([`reasoning_text`]), so a `thinking` part is
/// skipped, as is a part of a kind not known. A `content` of any other
/// kind, or a part that is no object or a `text` part without its text, is
/// malformed: never an answer dropped.
fn content_text(content: &Value) -> Result<String, ModelError> {
    match content {
        Value::Null => Ok(String::new()),
        Value::String(text) => Ok(text.clone()),
        Value::Array(parts) => {
            let mut text = String::new();
            for part in parts {
                if !part.is_object() {
                    return Err(malformed("a part of the message's `content` is not an object"));
                }
                if part["type"] == "text" {
                    let Some(piece) = part["text"].as_str() else {
                        return Err(malformed("a text part of the message's `content` has no text"));
                    };
                    text.push_str(piece);
                }
            }
            Ok(text)
        }
        _ => Err(malformed(
            "the message's `content` is neither text, null nor a list of parts",
        )),
    }
}

/// The stop a `finish_reason` means. Besides OpenAI's own, an engine's
/// end-of-sequence name that some compatible servers pass on (`eos`,
/// `eos_token`) is a finished turn; any other name is [`ModelStop::Other`],
/// which the loop never takes as a whole turn.
fn finish_reason(reason: Option<&str>) -> ModelStop {
    match reason.filter(|r| !is_no_reason(r)) {
        Some("stop") | Some("eos") | Some("eos_token") | None => ModelStop::EndTurn,
        Some("tool_calls") | Some("function_call") => ModelStop::ToolUse,
        Some("length") => ModelStop::MaxTokens,
        Some("model_context_window_exceeded") => ModelStop::ContextWindowExceeded,
        Some("content_filter") => ModelStop::Refusal,
        Some(other) => ModelStop::Other(other.to_owned()),
    }
}

/// A `finish_reason` that means none yet: some servers (Ollama, SGLang,
/// LocalAI, KoboldCpp) send `""` or `"null"` on every chunk instead of
/// `null`, which must not make the first chunk look like the last.
fn is_no_reason(reason: &str) -> bool {
    reason.is_empty() || reason == "null"
}

fn usage(value: &Value) -> Usage {
    let cached = value
        .pointer("/prompt_tokens_details/cached_tokens")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    let prompt = value["prompt_tokens"].as_u64().unwrap_or(0);
    let mut usage = Usage::new(
        prompt.saturating_sub(cached),
        value["completion_tokens"].as_u64().unwrap_or(0),
    );
    usage.cache_read_input_tokens = cached;
    usage
}

/// A whole (non-streamed) completion.
pub fn parse_response(body: &Value) -> Result<ModelResponse, ModelError> {
    let choices = match &body["choices"] {
        Value::Array(choices) => choices.as_slice(),
        _ => &[],
    };
    // The answer's choice, the one the core parser reads the calls of.
    let Some(choice) = first_choice(choices).map(|at| &choices[at]) else {
        return Err(malformed("the completion has no choices"));
    };
    let message = &choice["message"];
    let mut content = Vec::new();
    if let Some((field, reasoning)) = reasoning_text(message) {
        content.push(reasoning_block(reasoning.to_owned(), field));
    }
    let text = content_text(&message["content"])?;
    if !text.is_empty() {
        content.push(Block::Text { text });
    }
    // The core parser checks the calls (a list, ids present and distinct,
    // none in another choice), given the whole completion; they are the
    // message's `tool_calls`, in order.
    let calls = crate::format::openai::chat_tool_calls(body).map_err(|e| malformed(e.to_string()))?;
    let sent = message["tool_calls"].as_array().map(Vec::as_slice).unwrap_or_default();
    for (call, sent) in calls.into_iter().zip(sent) {
        let text = match call.arguments {
            crate::CallArguments::Text(text) => text,
            crate::CallArguments::Json(value) => value.to_string(),
        };
        let mut extra = Map::new();
        keep_call_fields(sent, &mut extra);
        content.push(Block::ToolUse(read_call(
            call.id.unwrap_or_default(),
            call.name,
            text,
            &extra,
        )));
    }
    if message.get("tool_calls").is_some_and(|c| !c.is_null() && !c.is_array()) {
        return Err(malformed("`tool_calls` is not a list"));
    }
    let mut stop = finish_reason(choice["finish_reason"].as_str());
    if message["refusal"].as_str().is_some_and(|r| !r.is_empty()) {
        stop = ModelStop::Refusal;
        content.push(Block::Text {
            text: message["refusal"].as_str().unwrap_or_default().to_owned(),
        });
    }
    let mut response = ModelResponse::new(content, stop);
    response.usage = usage(&body["usage"]);
    response.id = body["id"].as_str().map(str::to_owned);
    Ok(response)
}

#[derive(Debug, Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
    /// The length of `arguments` when they were last found not whole: they
    /// are parsed again only once more has come.
    not_whole_at: Option<usize>,
    /// The fields kept to send back with the call (`KEPT_CALL_FIELDS`).
    extra: Map<String, Value>,
}

/// A streamed completion being put together from its chunks. A tool call is
/// complete when a later one starts or the choice finishes.
#[derive(Debug, Default)]
struct StreamState {
    /// The reasoning, streamed in `delta.reasoning_content` (or
    /// `delta.reasoning`).
    reasoning: String,
    /// The field the reasoning came in, from its first piece.
    reasoning_field: Option<&'static str>,
    /// Whether the reasoning was reported complete (`ThinkingDone`), as it
    /// is before the first call reported.
    reasoning_reported: bool,
    text: String,
    /// A refusal's text, streamed in `delta.refusal`.
    refusal: String,
    /// The calls in the order they started.
    calls: Vec<PartialCall>,
    /// How many of `calls`, from the first, were reported: a call is
    /// reported once every call before it is, so each is checked once.
    reported: usize,
    /// The server's `index` of a call to its place in `calls`: the latest
    /// call given that index.
    indices: HashMap<u64, usize>,
    /// The ids of the calls reported so far.
    call_ids: HashSet<String>,
    stop: Option<ModelStop>,
    usage: Usage,
    id: Option<String>,
    done: bool,
}

impl http::StreamReader for StreamState {
    fn event(&mut self, event: SseEvent, events: &mut (dyn FnMut(StreamEvent) + Send)) -> Result<bool, ModelError> {
        // Some servers report a failure as an `error` event: the server's
        // error, whatever its data holds (a bare error object, text).
        if event.event == "error" {
            return Err(http::event_error(&event.data));
        }
        self.chunk(&event.data, events)
    }

    /// Whole once the choice's finish_reason came: only the usage chunk
    /// and `[DONE]` follow it.
    fn whole(&self) -> bool {
        self.stop.is_some()
    }
}

impl StreamState {
    /// Reads one chunk, the data of one event.
    fn chunk(&mut self, data: &str, events: &mut (dyn FnMut(StreamEvent) + Send)) -> Result<bool, ModelError> {
        if data.trim() == "[DONE]" {
            self.done = true;
            return Ok(true);
        }
        if data.trim().is_empty() {
            return Ok(false);
        }
        let chunk: Value =
            serde_json::from_str(data).map_err(|e| malformed(format!("a stream chunk is not JSON: {e}")))?;
        if chunk.get("error").is_some_and(|e| !e.is_null()) {
            return Err(http::stream_error(&chunk));
        }
        if self.id.is_none() {
            self.id = chunk["id"].as_str().map(str::to_owned);
        }
        if chunk["usage"].is_object() {
            self.usage = usage(&chunk["usage"]);
        }
        // Only the first choice is read, the one of `index` 0 (or none),
        // wherever the chunk puts it: a server streaming several choices
        // may send another alone in a chunk. Another's text and finish are
        // not the answer's; a call in another would be lost, so it is an
        // error.
        let choices = match &chunk["choices"] {
            Value::Array(choices) => choices.as_slice(),
            _ => &[],
        };
        let first = first_choice(choices);
        crate::format::check_only_first_has_calls(
            choices,
            first,
            crate::format::openai::choice_holds_calls,
            ["chunk", "choices", "first choice's calls"],
        )
        .map_err(|e| malformed(e.to_string()))?;
        let Some(choice) = first.map(|at| &choices[at]) else {
            return Ok(false);
        };
        // Some servers send a chunk's content as `message`, as in a whole
        // completion: read as the delta, so no call in it is lost.
        let delta = match choice.get("delta").filter(|d| !d.is_null()) {
            Some(delta) => delta,
            None => &choice["message"],
        };
        // As the whole-response parser: a call of the deprecated form is an
        // error, never lost.
        crate::format::openai::check_no_function_call(delta).map_err(|e| malformed(e.to_string()))?;
        if let Some((field, reasoning)) = reasoning_text(delta) {
            self.reasoning_field.get_or_insert(field);
            self.reasoning.push_str(reasoning);
            events(StreamEvent::Thinking(reasoning.to_owned()));
        }
        let text = content_text(&delta["content"])?;
        if !text.is_empty() {
            self.text.push_str(&text);
            events(StreamEvent::Text(text));
        }
        // A refusal is text the user reads, shown as it streams like the
        // rest (it ends the message, where the shown text ends too).
        if let Some(refusal) = delta["refusal"].as_str().filter(|r| !r.is_empty()) {
            self.refusal.push_str(refusal);
            events(StreamEvent::Text(refusal.to_owned()));
        }
        if let Some(calls) = delta.get("tool_calls").filter(|c| !c.is_null()) {
            let Some(calls) = calls.as_array() else {
                return Err(malformed("`tool_calls` is not a list"));
            };
            for call in calls {
                let at = self.call_at(call, events)?;
                // A call reported whole has started: what would change it
                // now would make it another call than the one running.
                let continued = match call.pointer("/function/arguments") {
                    Some(Value::String(piece)) => !piece.is_empty(),
                    Some(whole) => whole.is_object(),
                    None => false,
                };
                if at < self.reported && continued {
                    return Err(malformed(format!(
                        "tool call {} was continued after a later call began",
                        clip(&self.calls[at].id)
                    )));
                }
                let partial = &mut self.calls[at];
                // The id and name come once (some servers repeat them).
                if let Some(id) = call["id"].as_str().filter(|_| partial.id.is_empty()) {
                    partial.id = id.to_owned();
                }
                if let Some(name) = call
                    .pointer("/function/name")
                    .and_then(Value::as_str)
                    .filter(|_| partial.name.is_empty())
                {
                    partial.name = name.to_owned();
                }
                match call.pointer("/function/arguments") {
                    Some(Value::String(piece)) => partial.arguments.push_str(piece),
                    // Some servers send the arguments whole, as an object.
                    Some(whole @ Value::Object(_)) => partial.arguments = whole.to_string(),
                    _ => {}
                }
                keep_call_fields(call, &mut partial.extra);
            }
        }
        if let Some(reason) = choice["finish_reason"].as_str().filter(|r| !is_no_reason(r)) {
            self.stop = Some(finish_reason(Some(reason)));
            self.report(events, Reported::All)?;
        }
        Ok(false)
    }

    /// The place in `calls` of the call a `tool_calls` delta continues or
    /// opens. A delta opens a call when its `index` is new, or when it
    /// carries an id other than the call's at that index (some servers,
    /// Ollama among them, give every call the index 0); without an index,
    /// it continues the last call unless its id says otherwise (some
    /// servers repeat the call's id on every delta).
    fn call_at(&mut self, call: &Value, events: &mut (dyn FnMut(StreamEvent) + Send)) -> Result<usize, ModelError> {
        let id = call["id"].as_str().filter(|id| !id.is_empty());
        let continues = |at: usize| id.is_none_or(|id| self.calls[at].id.is_empty() || self.calls[at].id == id);
        let index = call["index"].as_u64();
        let current = match index {
            Some(index) => self.indices.get(&index).copied(),
            None => self.calls.len().checked_sub(1),
        };
        if let Some(at) = current.filter(|&at| continues(at)) {
            return Ok(at);
        }
        // A new call means every earlier one is complete, as OpenAI sends
        // them; a server that interleaves the deltas of calls is caught
        // (see `report`).
        self.report(events, Reported::Whole)?;
        self.calls.push(PartialCall::default());
        let at = self.calls.len() - 1;
        if let Some(index) = index {
            self.indices.insert(index, at);
        }
        Ok(at)
    }

    /// Checks and reports the calls not reported yet: all of them at the
    /// end of the turn, or (`Reported::Whole`) those, in order, whose
    /// arguments are already a whole JSON object. A call is reported once,
    /// and starts then, so one whose arguments are empty or not whole yet
    /// waits for the end: a server that interleaved the deltas of its calls
    /// could still continue it. (A reported call that is continued is a
    /// malformed stream: see `chunk`.) In a turn cut off (`length`,
    /// `content_filter`, a finish_reason not known) the last call may be
    /// incomplete, so the calls are checked but not reported: none starts
    /// early, and the loop answers them from the whole message.
    fn report(&mut self, events: &mut (dyn FnMut(StreamEvent) + Send), which: Reported) -> Result<(), ModelError> {
        let interrupted = self.stop.as_ref().is_some_and(ModelStop::interrupts);
        for call in &mut self.calls[self.reported..] {
            if which == Reported::Whole {
                let len = call.arguments.len();
                if call.not_whole_at == Some(len) || !is_whole_object(&call.arguments) {
                    call.not_whole_at = Some(len);
                    break;
                }
            }
            if call.id.is_empty() || call.name.is_empty() {
                return Err(malformed("a streamed tool call lacks its id or function name"));
            }
            // Parsed once, at the end: arguments that are several whole
            // JSON values are calls a server merged at one index, and the
            // calls after the first would be lost.
            if which == Reported::All
                && !is_whole_object(&call.arguments)
                && let Some(count) = several_values(&call.arguments)
            {
                return Err(malformed(format!(
                    "the arguments of tool call `{}` (`{}`) are {count} JSON values one after another: the server \
                     merged several calls into one",
                    clip(&call.id),
                    clip(&call.name)
                )));
            }
            // Refused before the call is reported, and so before it starts.
            check_call_id(&call.id, &mut self.call_ids).map_err(|e| malformed(e.to_string()))?;
            self.reported += 1;
            if !interrupted {
                // The reasoning came before the call: kept with it should
                // the turn end before its message is whole.
                if !self.reasoning_reported && !self.reasoning.is_empty() {
                    self.reasoning_reported = true;
                    let field = self.reasoning_field.unwrap_or(REASONING_FIELDS[0]);
                    events(StreamEvent::ThinkingDone(reasoning_block(
                        self.reasoning.clone(),
                        field,
                    )));
                }
                events(StreamEvent::ToolUse(read_call(
                    &call.id,
                    &call.name,
                    &call.arguments,
                    &call.extra,
                )));
            }
        }
        Ok(())
    }

    fn finish(mut self, events: &mut (dyn FnMut(StreamEvent) + Send)) -> Result<ModelResponse, ModelError> {
        if !self.done && self.stop.is_none() {
            return Err(malformed("the stream ended before its last chunk"));
        }
        // `[DONE]` after nothing at all is no answer, but a failure the
        // server reported in a form not read here (an `error:` line, which
        // SSE clients must ignore, say): never an empty turn that ended well.
        if self.stop.is_none() && self.text.is_empty() && self.refusal.is_empty() && self.calls.is_empty() {
            return Err(malformed("the stream ended without a finish_reason or any content"));
        }
        // A stream that ended without a finish_reason never said its turn
        // was whole. Some servers leave it out, so a turn whose calls read
        // as whole is; but one with a call whose arguments are cut short
        // (text that is no whole JSON value) is taken as cut off at its
        // token limit, as by `length`: such a call is not handed on as
        // complete, and the loop answers it without running it.
        if self.stop.is_none() && self.calls[self.reported..].iter().any(|c| is_cut_short(&c.arguments)) {
            self.stop = Some(ModelStop::MaxTokens);
        }
        self.report(events, Reported::All)?;
        let mut content = Vec::new();
        if !self.reasoning.is_empty() {
            let field = self.reasoning_field.unwrap_or(REASONING_FIELDS[0]);
            content.push(reasoning_block(self.reasoning, field));
        }
        if !self.text.is_empty() {
            content.push(Block::Text { text: self.text });
        }
        // Every call was reported, so their ids are known to differ.
        for call in self.calls {
            content.push(Block::ToolUse(read_call(
                call.id,
                call.name,
                call.arguments,
                &call.extra,
            )));
        }
        let mut stop = self.stop.unwrap_or(ModelStop::EndTurn);
        // As in a whole response: the refusal is the stop reason, its text
        // the message's last.
        if !self.refusal.is_empty() {
            stop = ModelStop::Refusal;
            content.push(Block::Text { text: self.refusal });
        }
        let mut response = ModelResponse::new(content, stop);
        response.usage = self.usage;
        response.id = self.id;
        Ok(response)
    }
}

/// How many whole JSON values `text` holds one after another, when it is
/// two or more and nothing else (`{"p":1}{"p":2}`); `None` otherwise.
fn several_values(text: &str) -> Option<usize> {
    let mut count = 0;
    for value in serde_json::Deserializer::from_str(text).into_iter::<serde::de::IgnoredAny>() {
        value.ok()?;
        count += 1;
    }
    (count >= 2).then_some(count)
}

/// Which calls [`StreamState::report`] reports.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Reported {
    /// Those whose arguments are already a whole JSON object.
    Whole,
    /// All: the turn has ended.
    All,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(chunks: &[Value]) -> (Vec<StreamEvent>, Result<ModelResponse, ModelError>) {
        let mut seen = Vec::new();
        let mut events = |e: StreamEvent| seen.push(e);
        let mut state = StreamState::default();
        for chunk in chunks {
            state.chunk(&chunk.to_string(), &mut events).unwrap();
        }
        let response = state.finish(&mut events);
        (seen, response)
    }

    /// The ids of the calls `events` reported complete, in order.
    fn started(events: &[StreamEvent]) -> Vec<&str> {
        events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::ToolUse(call) => Some(call.id.as_str()),
                _ => None,
            })
            .collect()
    }

    /// Ollama gives every parallel call the index 0: a new id at the same
    /// index is a second call, never more arguments for the first.
    #[test]
    fn a_new_id_at_a_used_index_opens_a_call() {
        let delta = |d: Value| json!({"choices": [{"index": 0, "delta": d, "finish_reason": null}]});
        let call = |id: &str, args: &str| {
            delta(json!({"tool_calls": [{"index": 0, "id": id, "function": {"name": "write", "arguments": args}}]}))
        };
        let (events, response) = run(&[
            call("a", "{\"p\":1}"),
            call("b", "{\"p\":"),
            delta(json!({"tool_calls": [{"index": 0, "function": {"arguments": "2}"}}]})),
            json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
        ]);
        let response = response.unwrap();
        let calls: Vec<(&str, Value)> = response.tool_uses().map(|c| (c.id.as_str(), c.input.clone())).collect();
        assert_eq!(calls, [("a", json!({"p": 1})), ("b", json!({"p": 2}))]);
        assert_eq!(events.len(), 2, "each call reported once, complete");
    }

    /// Servers that send `finish_reason: ""` (or `"null"`) on every chunk
    /// have not finished: the turn is whole only at the real reason, a call
    /// still starts early when the next one opens, and a stream cut off
    /// before the end is an error, not an answer.
    #[test]
    fn an_empty_finish_reason_is_none_yet() {
        for none in ["", "null"] {
            let delta = |d: Value| json!({"choices": [{"index": 0, "delta": d, "finish_reason": none}]});
            let call = |index: u64, id: &str| {
                delta(
                    json!({"tool_calls": [{"index": index, "id": id, "function": {"name": "write", "arguments": "{}"}}]}),
                )
            };
            let mut seen = Vec::new();
            let mut events = |e: StreamEvent| seen.push(e);
            let mut state = StreamState::default();
            for chunk in [delta(json!({"content": "Writing."})), call(0, "a"), call(1, "b")] {
                state.chunk(&chunk.to_string(), &mut events).unwrap();
                assert!(
                    !http::StreamReader::whole(&state),
                    "{none:?}: not whole before the last chunk"
                );
            }
            assert!(
                state.finish(&mut events).is_err(),
                "{none:?}: a stream that stops here was cut off"
            );
            assert_eq!(
                started(&seen),
                ["a"],
                "{none:?}: the first call starts when the second opens"
            );

            let (_, response) = run(&[
                call(0, "a"),
                json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
            ]);
            assert_eq!(response.unwrap().stop, ModelStop::ToolUse, "{none:?}");
        }
        let whole = json!({"choices": [{"message": {"role": "assistant", "content": "Hi."}, "finish_reason": ""}]});
        assert_eq!(parse_response(&whole).unwrap().stop, ModelStop::EndTurn);
    }

    /// Only the first choice is read, so a call in another is an error,
    /// streamed or not, never dropped.
    #[test]
    fn calls_in_a_later_choice_are_errors() {
        let call =
            json!([{"index": 0, "id": "a", "type": "function", "function": {"name": "write", "arguments": "{}"}}]);
        let whole = json!({"choices": [
            {"index": 0, "message": {"role": "assistant", "content": "Hi."}, "finish_reason": "stop"},
            {"index": 1, "message": {"role": "assistant", "content": null, "tool_calls": call}, "finish_reason": "tool_calls"},
        ]});
        assert!(parse_response(&whole).is_err());
        let chunk = json!({"choices": [
            {"index": 0, "delta": {"content": "Hi."}, "finish_reason": null},
            {"index": 1, "delta": {"tool_calls": call}, "finish_reason": null},
        ]});
        let mut state = StreamState::default();
        assert!(state.chunk(&chunk.to_string(), &mut |_| {}).is_err());
    }

    /// A turn cut off (`length`, `content_filter`) may end in a call cut
    /// short, even to no arguments at all, which would run on its
    /// defaults: only the calls a later one showed complete are reported.
    #[test]
    fn the_last_call_of_a_turn_cut_off_is_not_reported() {
        let delta = |d: Value| json!({"choices": [{"index": 0, "delta": d, "finish_reason": null}]});
        let call = |index: u64, id: &str, args: &str| {
            delta(json!({"tool_calls": [{"index": index, "id": id, "function": {"name": "write", "arguments": args}}]}))
        };
        for (reason, stop) in [("length", ModelStop::MaxTokens), ("content_filter", ModelStop::Refusal)] {
            let (events, response) = run(&[
                call(0, "a", "{\"p\":1}"),
                call(1, "b", ""),
                json!({"choices": [{"index": 0, "delta": {}, "finish_reason": reason}]}),
            ]);
            assert_eq!(started(&events), ["a"], "{reason}");
            let response = response.unwrap();
            assert_eq!(response.stop, stop);
            assert_eq!(
                response.tool_uses().count(),
                2,
                "both calls are in the message, to be answered"
            );
        }
        let (events, _) = run(&[
            call(0, "a", "{}"),
            json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
        ]);
        assert_eq!(events.len(), 1, "a turn that ends well reports its last call");
    }

    #[test]
    fn a_chunk_sent_as_a_message_is_read_as_its_delta() {
        let (events, response) = run(&[json!({"choices": [{"index": 0, "message": {
            "role": "assistant",
            "content": "Writing.",
            "tool_calls": [{"index": 0, "id": "c1", "type": "function", "function": {"name": "write", "arguments": "{}"}}],
        }, "finish_reason": "tool_calls"}]})]);
        assert_eq!(started(&events), ["c1"]);
        let response = response.unwrap();
        assert_eq!(response.stop, ModelStop::ToolUse);
        assert_eq!(response.content.len(), 2, "{:?}", response.content);
    }

    /// A call starts early only once its arguments are a whole object, so
    /// a server that interleaves the deltas of its calls never starts one
    /// on arguments it has not finished sending; a call that had started
    /// whole and is then continued makes the stream malformed, never a
    /// call other than the one running.
    #[test]
    fn interleaved_call_deltas_never_start_a_call_on_other_arguments() {
        let delta = |d: Value| json!({"choices": [{"index": 0, "delta": d, "finish_reason": null}]});
        let piece = |index: u64, id: Option<&str>, arguments: &str| {
            let mut call = json!({"index": index, "function": {"arguments": arguments}});
            if let Some(id) = id {
                call["id"] = json!(id);
                call["function"]["name"] = json!("write");
            }
            delta(json!({"tool_calls": [call]}))
        };
        let end = json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]});
        let seen = std::sync::Mutex::new(Vec::new());
        let mut events = |e: StreamEvent| seen.lock().unwrap().push(e);
        let mut state = StreamState::default();
        for chunk in [
            piece(0, Some("c0"), ""),
            piece(1, Some("c1"), "{\"path\": \"/y\"}"),
            piece(0, None, "{\"path\": \"/x\"}"),
        ] {
            state.chunk(&chunk.to_string(), &mut events).unwrap();
        }
        assert!(seen.lock().unwrap().is_empty(), "c0 waited, and c1 with it");
        // A new call: c0 and c1 are whole, and start.
        state
            .chunk(&piece(2, Some("c2"), "{}").to_string(), &mut events)
            .unwrap();
        assert_eq!(seen.lock().unwrap().len(), 2);
        state.chunk(&end.to_string(), &mut events).unwrap();
        let response = state.finish(&mut events).unwrap();
        let reported: Vec<(String, Value)> = seen
            .lock()
            .unwrap()
            .iter()
            .filter_map(|e| match e {
                StreamEvent::ToolUse(call) => Some((call.id.clone(), call.input.clone())),
                _ => None,
            })
            .collect();
        let whole: Vec<(String, Value)> = response.tool_uses().map(|c| (c.id.clone(), c.input.clone())).collect();
        assert_eq!(reported, whole);
        assert_eq!(whole[0], ("c0".to_owned(), json!({"path": "/x"})));

        let mut state = StreamState::default();
        let mut events = |_: StreamEvent| {};
        state
            .chunk(&piece(0, Some("c0"), "{\"a\": 1}").to_string(), &mut events)
            .unwrap();
        state
            .chunk(&piece(1, Some("c1"), "{}").to_string(), &mut events)
            .unwrap();
        let error = state.chunk(&piece(0, None, "2").to_string(), &mut events).unwrap_err();
        assert_eq!(error.kind(), crate::model::ModelErrorKind::MalformedResponse, "{error}");
        assert!(error.to_string().contains("c0"), "{error}");
    }

    #[test]
    fn arguments_streamed_whole_as_an_object_are_kept() {
        let delta = |d: Value| json!({"choices": [{"index": 0, "delta": d, "finish_reason": null}]});
        let (_, response) = run(&[
            delta(
                json!({"tool_calls": [{"index": 0, "id": "c1", "function": {"name": "add", "arguments": {"a": 1}}}]}),
            ),
            json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
        ]);
        let calls: Vec<Value> = response.unwrap().tool_uses().map(|c| c.input.clone()).collect();
        assert_eq!(calls, [json!({"a": 1})]);
    }

    #[test]
    fn a_streamed_call_whose_id_was_used_is_refused_before_it_is_reported() {
        let delta = |d: Value| json!({"choices": [{"index": 0, "delta": d, "finish_reason": null}]});
        let call = |index: u64| {
            delta(
                json!({"tool_calls": [{"index": index, "id": "same", "function": {"name": "write", "arguments": "{}"}}]}),
            )
        };
        let mut seen = Vec::new();
        let mut events = |e: StreamEvent| seen.push(e);
        let mut state = StreamState::default();
        state.chunk(&call(0).to_string(), &mut events).unwrap();
        state.chunk(&call(1).to_string(), &mut events).unwrap();
        let end = json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]});
        let error = state.chunk(&end.to_string(), &mut events).unwrap_err();
        assert!(
            error.to_string().contains("the tool call id `same` appears twice"),
            "{error}"
        );
        assert_eq!(seen.len(), 1, "only the first call was reported: {seen:?}");
    }

    #[test]
    fn a_streamed_refusal_is_the_stop_reason() {
        let delta = |d: Value| json!({"choices": [{"index": 0, "delta": d, "finish_reason": null}]});
        let (_, response) = run(&[
            delta(json!({"role": "assistant", "refusal": ""})),
            delta(json!({"refusal": "I can't help "})),
            delta(json!({"refusal": "with that."})),
            json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
        ]);
        let response = response.unwrap();
        assert_eq!(response.stop, ModelStop::Refusal);
        assert_eq!(
            response.content,
            [Block::Text {
                text: "I can't help with that.".into()
            }]
        );
    }

    #[test]
    fn deltas_without_an_index_continue_the_last_call() {
        let delta = |d: Value| json!({"choices": [{"index": 0, "delta": d, "finish_reason": null}]});
        let (events, response) = run(&[
            delta(
                json!({"tool_calls": [{"id": "c1", "type": "function", "function": {"name": "add", "arguments": "{\"a\":"}}]}),
            ),
            delta(json!({"tool_calls": [{"function": {"arguments": "1}"}}]})),
            delta(
                json!({"tool_calls": [{"id": "c2", "type": "function", "function": {"name": "greet", "arguments": "{}"}}]}),
            ),
            json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
        ]);
        let response = response.unwrap();
        let calls: Vec<(String, String)> = response
            .tool_uses()
            .map(|c| (c.id.clone(), c.arguments_text()))
            .collect();
        assert_eq!(calls, [("c1".into(), "{\"a\":1}".into()), ("c2".into(), "{}".into())]);
        assert_eq!(events.len(), 2);
        assert_eq!(response.stop, ModelStop::ToolUse);
    }

    #[test]
    fn a_repeated_id_without_an_index_continues_its_call() {
        let delta = |d: Value| json!({"choices": [{"index": 0, "delta": d, "finish_reason": null}], "error": null});
        let piece =
            |args: &str| delta(json!({"tool_calls": [{"id": "c1", "function": {"name": "add", "arguments": args}}]}));
        let (events, response) = run(&[
            piece("{\"a\":"),
            piece("1}"),
            json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
        ]);
        let response = response.unwrap();
        let calls: Vec<(&str, Value)> = response.tool_uses().map(|c| (c.id.as_str(), c.input.clone())).collect();
        assert_eq!(calls, [("c1", json!({"a": 1}))]);
        // Reported once, complete.
        assert_eq!(events.len(), 1);
    }

    #[test]
    fn repeated_ids_and_names_are_not_doubled() {
        let delta = |d: Value| json!({"choices": [{"index": 0, "delta": d, "finish_reason": null}]});
        let piece = |args: &str| {
            delta(json!({"tool_calls": [{"index": 0, "id": "c1", "function": {"name": "add", "arguments": args}}]}))
        };
        let (_, response) = run(&[
            piece("{\"a\":"),
            piece("1}"),
            json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
        ]);
        let response = response.unwrap();
        let call = response.tool_uses().next().unwrap();
        assert_eq!((call.id.as_str(), call.name.as_str()), ("c1", "add"));
        assert_eq!(call.input, json!({"a": 1}));
        let body = OpenAi::new("o3")
            .max_completion_tokens(100)
            .request_body(&ModelRequest::new(&[], &[]));
        assert_eq!(body["max_completion_tokens"], 100);
        assert!(body.get("max_tokens").is_none());
    }

    /// Streamed reasoning is shown as thinking, reported complete before
    /// the first call (kept with it should the turn fail), and opens the
    /// message; a call's `extra_content` is kept on it; both go back.
    #[test]
    fn streamed_reasoning_and_a_call_s_extra_content_go_back() {
        let delta = |d: Value| json!({"choices": [{"index": 0, "delta": d, "finish_reason": null}]});
        let signature = json!({"google": {"thought_signature": "c2ln"}});
        let (events, response) = run(&[
            delta(json!({"role": "assistant", "content": null, "reasoning_content": "Add "})),
            // Servers that send both fields send the same text in each.
            delta(json!({"reasoning_content": "them.", "reasoning": "them."})),
            delta(json!({"tool_calls": [{"index": 0, "id": "c1", "type": "function",
                "function": {"name": "add", "arguments": "{}"}, "extra_content": signature}]})),
            delta(json!({"tool_calls": [{"index": 1, "id": "c2", "type": "function",
                "function": {"name": "add", "arguments": "{}"}}]})),
            json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
        ]);
        let reasoning = reasoning_block("Add them.".into(), "reasoning_content");
        let mut first = ToolUse::from_text("c1", "add", "{}");
        first.extra = Some(json!({"extra_content": signature}));
        let second = ToolUse::from_text("c2", "add", "{}");
        assert_eq!(
            events,
            [
                StreamEvent::Thinking("Add ".into()),
                StreamEvent::Thinking("them.".into()),
                StreamEvent::ThinkingDone(reasoning.clone()),
                StreamEvent::ToolUse(first.clone()),
                StreamEvent::ToolUse(second.clone()),
            ]
        );
        let content = response.unwrap().content;
        assert_eq!(content, [reasoning, Block::ToolUse(first), Block::ToolUse(second)]);
        let sent = messages_json(&Message::new(Role::Assistant, content));
        assert_eq!(sent[0]["reasoning_content"], "Add them.");
        assert_eq!(sent[0]["tool_calls"][0]["extra_content"], signature);
        assert!(sent[0]["tool_calls"][1].get("extra_content").is_none());

        let (events, response) = run(&[
            delta(json!({"role": "assistant", "reasoning": "Just say hi.", "reasoning_content": null})),
            delta(json!({"content": "Hi."})),
            json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
        ]);
        assert_eq!(events[0], StreamEvent::Thinking("Just say hi.".into()));
        assert_eq!(
            response.unwrap().content[0],
            reasoning_block("Just say hi.".into(), "reasoning")
        );
    }

    /// Reasoning goes back on an assistant message only, and only as it
    /// came: Anthropic's signed thinking is not sent, and a call's kept
    /// fields never replace the ones this client writes.
    #[test]
    fn only_unsigned_thinking_goes_back_and_kept_fields_replace_nothing() {
        let mut call = ToolUse::from_text("c1", "add", "{}");
        call.extra = Some(json!({"id": "other", "extra_content": {"k": 1}}));
        let signed = Block::Thinking {
            thinking: "Claude's.".into(),
            signature: "sig-1".into(),
        };
        let sent = messages_json(&Message::new(Role::Assistant, vec![signed, Block::ToolUse(call)]));
        assert!(sent[0].get("reasoning_content").is_none(), "{sent:?}");
        assert_eq!(sent[0]["tool_calls"][0]["id"], "c1");
        assert_eq!(sent[0]["tool_calls"][0]["extra_content"], json!({"k": 1}));
        let user = Message::new(Role::User, vec![reasoning_block("Mine.".into(), "reasoning")]);
        assert_eq!(messages_json(&user), [json!({"role": "user", "content": ""})]);
    }

    /// Reasoning goes back in the field it came in and no other (Groq
    /// refuses `reasoning_content`), reasoning read by an earlier version
    /// (a thinking block without a signature) as `reasoning_content`, a
    /// field this client never reads not at all, and nothing when the
    /// client is told not to send reasoning.
    #[test]
    fn reasoning_goes_back_in_the_field_it_came_in_only() {
        let turn = |reasoning: Block| {
            Message::new(
                Role::Assistant,
                vec![reasoning, Block::ToolUse(ToolUse::from_text("c1", "add", "{}"))],
            )
        };
        let fields = |sent: &Value| -> Vec<String> {
            let known = ["role", "content", "tool_calls"];
            let fields = sent.as_object().unwrap().keys();
            fields.filter(|k| !known.contains(&k.as_str())).cloned().collect()
        };
        for field in ["reasoning", "reasoning_content"] {
            let sent = &messages_json(&turn(reasoning_block("Add.".into(), field)))[0];
            assert_eq!(fields(sent), [field]);
            assert_eq!(sent[field], "Add.");
        }
        let legacy = Block::Thinking {
            thinking: "Add.".into(),
            signature: String::new(),
        };
        let sent = &messages_json(&turn(legacy))[0];
        assert_eq!(fields(sent), ["reasoning_content"]);
        let sent = &messages_json(&turn(reasoning_block("Add.".into(), "content")))[0];
        assert_eq!((fields(sent).len(), &sent["content"]), (0, &Value::Null));

        let transcript = [Message::user("Add."), turn(reasoning_block("Add.".into(), "reasoning"))];
        let request = ModelRequest::new(&transcript, &[]);
        let body = OpenAi::new("m").request_body(&request);
        assert_eq!(body["messages"][1]["reasoning"], "Add.");
        let body = OpenAi::new("m").send_reasoning(false).request_body(&request);
        assert_eq!(fields(&body["messages"][1]), Vec::<String>::new());
    }

    /// A refusal after streamed text is shown as it streams, and what was
    /// shown is the message's text, neither short of the refusal nor
    /// doubling it.
    #[test]
    fn a_refusal_after_text_is_shown_as_it_streams() {
        let delta = |d: Value| json!({"choices": [{"index": 0, "delta": d, "finish_reason": null}]});
        let (events, response) = run(&[
            delta(json!({"role": "assistant", "content": "Let me see. "})),
            delta(json!({"refusal": "I can't help "})),
            delta(json!({"refusal": "with that."})),
            json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
        ]);
        let shown: String = events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::Text(text) => Some(text.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(shown, "Let me see. I can't help with that.");
        let response = response.unwrap();
        assert_eq!(response.stop, ModelStop::Refusal);
        assert_eq!(Message::new(Role::Assistant, response.content).text(), shown);
    }

    /// Two calls a gateway merged at one index, the second without an id,
    /// are an error naming the call, never one call of bad arguments with
    /// the other lost; arguments merely cut short are still a call.
    #[test]
    fn calls_merged_at_one_index_are_an_error_naming_the_call() {
        let delta = |d: Value| json!({"choices": [{"index": 0, "delta": d, "finish_reason": null}]}).to_string();
        let first = delta(
            json!({"tool_calls": [{"index": 0, "id": "t1", "function": {"name": "glob", "arguments": "{\"p\":1}"}}]}),
        );
        let second = delta(json!({"tool_calls": [{"index": 0, "function": {"name": "", "arguments": "{\"p\":2}"}}]}));
        let end = json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}).to_string();
        for last in [end.as_str(), "[DONE]"] {
            let mut seen = Vec::new();
            let mut state = StreamState::default();
            let mut events = |e: StreamEvent| seen.push(e);
            state.chunk(&first, &mut events).unwrap();
            state.chunk(&second, &mut events).unwrap();
            let error = match state.chunk(last, &mut events) {
                Err(error) => error,
                Ok(_) => state.finish(&mut events).unwrap_err(),
            };
            assert_eq!(error.kind(), crate::model::ModelErrorKind::MalformedResponse, "{error}");
            assert!(error.message().contains("`t1` (`glob`)"), "{error}");
            assert!(error.message().contains("2 JSON values"), "{error}");
            assert!(seen.is_empty(), "{seen:?}");
        }
        for cut in ["{\"p\":1", "{\"p\":1} x", "[1]"] {
            let (_, response) = run(&[
                json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "t1",
                    "function": {"name": "glob", "arguments": cut}}]}, "finish_reason": null}]}),
                json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
            ]);
            let response = response.unwrap();
            assert_eq!(response.tool_uses().next().unwrap().raw_arguments.as_deref(), Some(cut));
        }
        assert_eq!(several_values("{\"p\":1}{\"p\":2} [3]"), Some(3));
        assert_eq!(several_values("{\"p\":1}"), None);
        assert_eq!(several_values(""), None);
    }

    /// A stream that ends (`[DONE]`) without a finish_reason hands on no
    /// call whose arguments are not a whole object, cut short or never
    /// begun: the turn is taken as cut off. One whose calls are all whole
    /// is a whole turn (some servers leave the finish_reason out).
    #[test]
    fn a_stream_without_a_finish_reason_hands_on_no_call_not_whole() {
        let call = |index: u64, id: &str, args: &str| {
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": index, "id": id,
                "function": {"name": "write", "arguments": args}}]}, "finish_reason": null}]})
            .to_string()
        };
        let read = |chunks: &[String]| {
            let mut seen = Vec::new();
            let mut state = StreamState::default();
            let mut events = |e: StreamEvent| seen.push(e);
            for chunk in chunks {
                state.chunk(chunk, &mut events).unwrap();
            }
            state.chunk("[DONE]", &mut events).unwrap();
            let response = state.finish(&mut events).unwrap();
            (
                started(&seen).iter().map(|id| id.to_string()).collect::<Vec<_>>(),
                response,
            )
        };
        for cut in ["{\"p\":", "{\"p\":1,", "[1"] {
            let (started, response) = read(&[call(0, "a", "{\"p\":1}"), call(1, "b", cut)]);
            assert_eq!(started, ["a"], "{cut:?}");
            assert_eq!(response.stop, ModelStop::MaxTokens, "{cut:?}");
            assert_eq!(response.tool_uses().count(), 2, "{cut:?}: both are answered");
        }
        // Whole as the binder reads them: no parameters, `null`, arguments
        // encoded twice, or no object at all (the binder says so).
        for whole in ["{}", "", " ", "null", "\"{\\\"p\\\":1}\"", "[1]"] {
            let (started, response) = read(&[call(0, "a", "{\"p\":1}"), call(1, "b", whole)]);
            assert_eq!(started, ["a", "b"], "{whole:?}");
            assert_eq!(response.stop, ModelStop::EndTurn, "{whole:?}");
        }
    }

    #[test]
    fn a_whole_completion_is_read_from_its_choice_of_index_0() {
        let whole = json!({"choices": [
            {"index": 1, "message": {"role": "assistant", "content": "Bonjour."}, "finish_reason": "stop"},
            {"index": 0, "message": {"role": "assistant", "content": null, "reasoning_content": "Call it.",
                "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "add", "arguments": "{}"},
                    "extra_content": {"google": {"thought_signature": "c2ln"}}}]}, "finish_reason": "tool_calls"},
        ]});
        let response = parse_response(&whole).unwrap();
        assert_eq!(response.stop, ModelStop::ToolUse);
        assert_eq!(
            response.content[0],
            reasoning_block("Call it.".into(), "reasoning_content")
        );
        let call = response.tool_uses().next().unwrap();
        assert_eq!(
            call.extra,
            Some(json!({"extra_content": {"google": {"thought_signature": "c2ln"}}}))
        );
        assert_eq!(response.content.len(), 2, "{:?}", response.content);
    }

    #[test]
    fn a_user_message_renders_results_first_then_text() {
        let message = Message::new(
            Role::User,
            vec![
                Block::ToolResult(super::super::ToolResultBlock::text("c1", "5", false)),
                Block::Text {
                    text: "2 turns left".into(),
                },
            ],
        );
        assert_eq!(
            messages_json(&message),
            vec![
                json!({"role": "tool", "tool_call_id": "c1", "content": "5"}),
                json!({"role": "user", "content": "2 turns left"}),
            ]
        );
    }
}
