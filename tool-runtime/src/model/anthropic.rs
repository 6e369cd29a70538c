//! A client for the Anthropic Messages API (`POST {base}/v1/messages`),
//! streaming or not.
//!
//! ```no_run
//! use tool_runtime::model::anthropic::Anthropic;
//! let model = Anthropic::new("claude-sonnet-4-5").max_tokens(4096).system("Be brief.").streaming(true);
//! ```

use std::collections::{BTreeMap, HashSet};
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::http::{self, RetryPolicy, is_cut_short, is_whole_object, malformed};
use super::{
    Block, Message, Model, ModelError, ModelFuture, ModelRequest, ModelResponse, ModelStop, Role, StreamEvent,
    ToolChoice, ToolUse, Usage,
};
use crate::format::{Format, call_id_and_name, check_call_id};
use crate::sse::SseEvent;
use crate::text::clip;

/// The API version sent in `anthropic-version`.
pub const API_VERSION: &str = "2023-06-01";

/// The Messages API client. Configure it with its builder methods; the API
/// key comes from `ANTHROPIC_API_KEY` unless set, the base URL from
/// `ANTHROPIC_BASE_URL` or `https://api.anthropic.com`.
#[derive(Clone, Debug)]
pub struct Anthropic {
    http: reqwest::Client,
    base_url: String,
    api_key: Option<String>,
    model: String,
    max_tokens: u32,
    system: Option<String>,
    temperature: Option<f64>,
    top_p: Option<f64>,
    top_k: Option<u32>,
    stop_sequences: Vec<String>,
    metadata: Option<Value>,
    thinking_budget: Option<u32>,
    tool_choice: Option<ToolChoice>,
    stream: bool,
    cache: bool,
    strict: bool,
    retry: RetryPolicy,
    total_timeout: Option<Duration>,
}

impl Anthropic {
    /// A client for `model` with the defaults: 4096 max tokens, no streaming,
    /// prompt caching of tools and system prompt on.
    pub fn new(model: impl Into<String>) -> Self {
        Anthropic {
            http: http::default_client(),
            base_url: std::env::var("ANTHROPIC_BASE_URL").unwrap_or_else(|_| "https://api.anthropic.com".to_owned()),
            api_key: std::env::var("ANTHROPIC_API_KEY").ok().filter(|k| !k.is_empty()),
            model: model.into(),
            max_tokens: 4096,
            system: None,
            temperature: None,
            top_p: None,
            top_k: None,
            stop_sequences: Vec::new(),
            metadata: None,
            thinking_budget: None,
            tool_choice: None,
            stream: false,
            cache: true,
            strict: false,
            retry: RetryPolicy::default(),
            total_timeout: Some(http::DEFAULT_TOTAL_TIMEOUT),
        }
    }

    /// The API's base URL: `https://api.anthropic.com`, a proxy or a
    /// compatible server; requests go to `{base}/v1/messages` (a base that
    /// already ends in `/v1` gets `/messages`).
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = url.into();
        self
    }

    /// The API key (instead of `ANTHROPIC_API_KEY`).
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(key.into());
        self
    }

    /// The most tokens the model may write in one turn.
    pub fn max_tokens(mut self, tokens: u32) -> Self {
        self.max_tokens = tokens;
        self
    }

    /// The system prompt.
    pub fn system(mut self, text: impl Into<String>) -> Self {
        self.system = Some(text.into());
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

    /// Top-k sampling.
    pub fn top_k(mut self, value: u32) -> Self {
        self.top_k = Some(value);
        self
    }

    /// Sequences that end the turn.
    pub fn stop_sequences<I: IntoIterator<Item = S>, S: Into<String>>(mut self, sequences: I) -> Self {
        self.stop_sequences = sequences.into_iter().map(Into::into).collect();
        self
    }

    /// Request metadata (`{"user_id": ...}`).
    pub fn metadata(mut self, metadata: Value) -> Self {
        self.metadata = Some(metadata);
        self
    }

    /// Extended thinking with this token budget (less than max tokens).
    pub fn thinking(mut self, budget_tokens: u32) -> Self {
        self.thinking_budget = Some(budget_tokens);
        self
    }

    /// How the model may use tools; a forced choice is sent only on a turn
    /// that answers a user's message (see [`ToolChoice`]).
    pub fn tool_choice(mut self, choice: ToolChoice) -> Self {
        self.tool_choice = Some(choice);
        self
    }

    /// Streams responses (server-sent events), so tool calls can start
    /// before the turn ends.
    pub fn streaming(mut self, on: bool) -> Self {
        self.stream = on;
        self
    }

    /// Marks the last tool and the system prompt with `cache_control` (on
    /// by default).
    pub fn prompt_caching(mut self, on: bool) -> Self {
        self.cache = on;
        self
    }

    /// Sends strict tool definitions (`strict: true`).
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
        body.insert("max_tokens".into(), json!(self.max_tokens));
        if let Some(system) = &self.system {
            let system = if self.cache {
                json!([{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}])
            } else {
                json!(system)
            };
            body.insert("system".into(), system);
        }
        body.insert(
            "messages".into(),
            Value::Array(request.messages.iter().map(message_json).collect()),
        );
        if !request.tools.is_empty() {
            let format = if self.strict {
                Format::AnthropicStrict
            } else {
                Format::Anthropic
            };
            let mut tools: Vec<Value> = request.tools.iter().map(|t| crate::format::render(t, format)).collect();
            if self.cache
                && let Some(Value::Object(last)) = tools.last_mut()
            {
                last.insert("cache_control".into(), json!({"type": "ephemeral"}));
            }
            body.insert("tools".into(), Value::Array(tools));
            if let Some(choice) = &self.tool_choice {
                body.insert("tool_choice".into(), tool_choice_json(&request.tool_choice(choice)));
            }
        }
        let mut put = |key: &str, value: Option<Value>| {
            if let Some(value) = value {
                body.insert(key.into(), value);
            }
        };
        put("temperature", self.temperature.map(|v| json!(v)));
        put("top_p", self.top_p.map(|v| json!(v)));
        put("top_k", self.top_k.map(|v| json!(v)));
        put(
            "stop_sequences",
            (!self.stop_sequences.is_empty()).then(|| json!(self.stop_sequences)),
        );
        put("metadata", self.metadata.clone());
        put(
            "thinking",
            self.thinking_budget
                .map(|budget| json!({"type": "enabled", "budget_tokens": budget})),
        );
        if self.stream {
            body.insert("stream".into(), json!(true));
        }
        Value::Object(body)
    }

    async fn call(
        &self,
        request: ModelRequest<'_>,
        events: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<ModelResponse, ModelError> {
        let body = http::encode_body(&self.request_body(&request), request.tools)?;
        // The base URL conventionally stops before `/v1`; one that includes
        // it is taken as meant.
        let base = self.base_url.trim_end_matches('/');
        let url = match base.strip_suffix("/v1") {
            Some(_) => http::join(base, "messages"),
            None => http::join(base, "v1/messages"),
        };
        let build = || {
            let mut builder = self
                .http
                .post(&url)
                .header("anthropic-version", API_VERSION)
                .header("content-type", "application/json")
                .body(body.clone());
            if let Some(key) = &self.api_key {
                builder = builder.header("x-api-key", key);
            }
            if self.stream {
                builder = builder.header("accept", "text/event-stream");
            }
            if let Some(limit) = self.total_timeout {
                builder = builder.timeout(limit);
            }
            builder
        };
        if self.stream {
            let stream: StreamState = http::stream(build, &self.retry, events).await?;
            stream.finish()
        } else {
            parse_response(&http::send(build, &self.retry).await?)
        }
    }
}

impl Model for Anthropic {
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

fn tool_choice_json(choice: &ToolChoice) -> Value {
    match choice {
        ToolChoice::Auto => json!({"type": "auto"}),
        ToolChoice::Any => json!({"type": "any"}),
        ToolChoice::None => json!({"type": "none"}),
        ToolChoice::Tool(name) => json!({"type": "tool", "name": name}),
    }
}

/// A transcript message as the Messages API takes it.
pub fn message_json(message: &Message) -> Value {
    let role = match message.role {
        Role::User => "user",
        Role::Assistant => "assistant",
    };
    // Reasoning from an OpenAI-compatible server has no signature, which
    // this API refuses: it is left out.
    let content: Vec<Value> = message
        .content
        .iter()
        .filter(|block| !block.is_unsigned_reasoning())
        .map(block_json)
        .collect();
    json!({"role": role, "content": content})
}

fn block_json(block: &Block) -> Value {
    match block {
        Block::Text { text } => json!({"type": "text", "text": text}),
        Block::ToolUse(call) => json!({"type": "tool_use", "id": call.id, "name": call.name, "input": call.input}),
        Block::ToolResult(result) => {
            let mut out = json!({"type": "tool_result", "tool_use_id": result.tool_use_id, "content": result.content});
            if result.is_error {
                out["is_error"] = json!(true);
            }
            out
        }
        Block::Thinking { thinking, signature } => {
            json!({"type": "thinking", "thinking": thinking, "signature": signature})
        }
        Block::RedactedThinking { data } => json!({"type": "redacted_thinking", "data": data}),
        // Left out by `message_json`; written as the transcript holds it.
        Block::Reasoning { text, field } => json!({"type": "reasoning", "text": text, "field": field}),
        Block::Provider(block) => block.clone(),
    }
}

fn stop_reason(reason: Option<&str>, sequence: Option<&str>) -> ModelStop {
    match reason {
        Some("end_turn") | None => ModelStop::EndTurn,
        Some("tool_use") => ModelStop::ToolUse,
        Some("max_tokens") => ModelStop::MaxTokens,
        Some("model_context_window_exceeded") => ModelStop::ContextWindowExceeded,
        Some("stop_sequence") => ModelStop::StopSequence(sequence.map(str::to_owned)),
        Some("pause_turn") => ModelStop::PauseTurn,
        Some("refusal") => ModelStop::Refusal,
        Some(other) => ModelStop::Other(other.to_owned()),
    }
}

/// Reads the counts of a `usage` object into `into`. A stream's counts
/// are cumulative (`message_start`, then each `message_delta`), so each
/// field keeps the larger of what it held and what `value` says: a
/// compatible server that sends `"input_tokens": 0` in its delta loses
/// none of the input `message_start` reported.
fn usage(value: &Value, into: &mut Usage) {
    let read = |key: &str, field: &mut u64| {
        if let Some(n) = value.get(key).and_then(Value::as_u64) {
            *field = (*field).max(n);
        }
    };
    read("input_tokens", &mut into.input_tokens);
    read("output_tokens", &mut into.output_tokens);
    read("cache_creation_input_tokens", &mut into.cache_creation_input_tokens);
    read("cache_read_input_tokens", &mut into.cache_read_input_tokens);
}

/// A whole (non-streamed) Messages API response.
pub fn parse_response(body: &Value) -> Result<ModelResponse, ModelError> {
    let Some(blocks) = body.get("content").and_then(Value::as_array) else {
        return Err(malformed("the response has no content array"));
    };
    // The core parser checks the tool_use blocks (ids present and distinct).
    let mut calls = crate::format::anthropic::tool_calls(body)
        .map_err(|e| malformed(e.to_string()))?
        .into_iter();
    let mut content = Vec::new();
    for block in blocks {
        match block["type"].as_str() {
            Some("text") => content.push(Block::Text {
                text: block["text"].as_str().unwrap_or_default().to_owned(),
            }),
            Some("tool_use") => {
                let call = calls
                    .next()
                    .ok_or_else(|| malformed("a tool_use block was not parsed"))?;
                let input = block.get("input").cloned().unwrap_or_else(|| json!({}));
                content.push(Block::ToolUse(tool_use(call.id.unwrap_or_default(), call.name, input)));
            }
            Some("thinking") => content.push(Block::Thinking {
                thinking: block["thinking"].as_str().unwrap_or_default().to_owned(),
                signature: block["signature"].as_str().unwrap_or_default().to_owned(),
            }),
            Some("redacted_thinking") => content.push(Block::RedactedThinking {
                data: block["data"].as_str().unwrap_or_default().to_owned(),
            }),
            _ => content.push(Block::Provider(block.clone())),
        }
    }
    let mut response = ModelResponse::new(
        content,
        stop_reason(body["stop_reason"].as_str(), body["stop_sequence"].as_str()),
    );
    usage(&body["usage"], &mut response.usage);
    response.id = body["id"].as_str().map(str::to_owned);
    Ok(response)
}

/// The call of a tool_use block that ended: its streamed input, or, when
/// no delta came, the input its start held. Input cut short (a turn that
/// hit max_tokens) stays as text: the binder tells the model what is wrong.
fn tool_use_end(id: String, name: String, json: String, input: Value) -> ToolUse {
    if json.trim().is_empty() {
        return tool_use(id, name, input);
    }
    match serde_json::from_str::<Value>(&json) {
        Ok(Value::Object(input)) => ToolUse::new(id, name, Value::Object(input)),
        _ => ToolUse::from_text(id, name, json),
    }
}

/// A call whose input came parsed. Input that is no JSON object (`null`, a
/// list, the arguments encoded twice as a string) is kept as its text, for
/// the registry to bind and explain, and the transcript sends `{}` in its
/// place: the API refuses any other `input`, and would refuse every later
/// request of the run.
fn tool_use(id: String, name: String, input: Value) -> ToolUse {
    match input {
        Value::Object(_) => ToolUse::new(id, name, input),
        other => ToolUse::from_text(id, name, other.to_string()),
    }
}

#[derive(Debug)]
enum Partial {
    Text(String),
    /// `input`: what the block's start held, the input unless deltas follow.
    ToolUse {
        id: String,
        name: String,
        json: String,
        input: Value,
    },
    Thinking {
        text: String,
        signature: String,
    },
    Redacted(String),
    Provider {
        block: Value,
        json: String,
    },
}

/// A streamed response being put together from its events.
#[derive(Debug, Default)]
struct StreamState {
    blocks: BTreeMap<u64, Partial>,
    done: Vec<(u64, Block)>,
    /// The ids of the tool_use blocks so far: present and distinct, as the
    /// non-streamed parser requires.
    call_ids: HashSet<String>,
    stop: Option<ModelStop>,
    usage: Usage,
    id: Option<String>,
    finished: bool,
    /// A tool_use that ended without its input streamed as a whole JSON
    /// object, not yet reported. When a turn is cut off (max_tokens, a
    /// full context window, a refusal) the API ends the open block before
    /// it says so: a call cut before its input began would run on its
    /// start's empty input, and one cut mid-input would be put to the
    /// approver (which may run it with arguments of its own). It is known
    /// whole only once another block starts or the turn ends for a reason
    /// known not to cut it off; a turn cut off answers it as not run, as
    /// the whole message would. A turn that ends with no stop reason at
    /// all while a call whose input was cut short is held is cut off.
    held: Option<ToolUse>,
}

impl http::StreamReader for StreamState {
    fn event(&mut self, event: SseEvent, events: &mut (dyn FnMut(StreamEvent) + Send)) -> Result<bool, ModelError> {
        // An `error` event is the server's error whatever it holds: the
        // API's `{"type": "error", "error": {...}}`, the error object bare
        // (`{"type": "overloaded_error", ...}`), or text.
        if event.event == "error" {
            return Err(http::event_error(&event.data));
        }
        if event.data.is_empty() {
            return Ok(false);
        }
        let data: Value = match serde_json::from_str(&event.data) {
            Ok(data) => data,
            Err(e) => return Err(malformed(format!("a stream event is not JSON: {e}"))),
        };
        let kind = data["type"].as_str().unwrap_or(event.event.as_str());
        let index = data["index"].as_u64();
        match kind {
            "message_start" => {
                // The API starts every message empty; blocks come as
                // events. Blocks here would be read by no one, a call among
                // them lost.
                if data["message"]["content"].as_array().is_some_and(|c| !c.is_empty()) {
                    return Err(malformed("message_start holds content blocks; they come as events"));
                }
                self.id = data["message"]["id"].as_str().map(str::to_owned);
                usage(&data["message"]["usage"], &mut self.usage);
            }
            "content_block_start" => {
                let index = index.ok_or_else(|| malformed("content_block_start without an index"))?;
                self.release(events);
                let block = &data["content_block"];
                if !block.is_object() {
                    return Err(malformed(format!("block {index} started as no object")));
                }
                // What the start carries is kept (the API starts a block
                // empty; some servers send it whole here).
                let carried = |key: &str| block[key].as_str().unwrap_or_default().to_owned();
                let partial = match block["type"].as_str() {
                    Some("text") => {
                        let text = carried("text");
                        if !text.is_empty() {
                            events(StreamEvent::Text(text.clone()));
                        }
                        Partial::Text(text)
                    }
                    Some("tool_use") => self.tool_use_start(block)?,
                    Some("thinking") => {
                        let text = carried("thinking");
                        if !text.is_empty() {
                            events(StreamEvent::Thinking(text.clone()));
                        }
                        Partial::Thinking {
                            text,
                            signature: carried("signature"),
                        }
                    }
                    Some("redacted_thinking") => {
                        Partial::Redacted(block["data"].as_str().unwrap_or_default().to_owned())
                    }
                    _ => Partial::Provider {
                        block: block.clone(),
                        json: String::new(),
                    },
                };
                // A block started again before its end would lose what it
                // held (a call, say): the stream is malformed.
                if self.blocks.insert(index, partial).is_some() {
                    return Err(malformed(format!("block {index} was started again before it ended")));
                }
            }
            "content_block_delta" => {
                let index = index.ok_or_else(|| malformed("content_block_delta without an index"))?;
                let delta = &data["delta"];
                let Some(block) = self.blocks.get_mut(&index) else {
                    return Err(malformed(format!("a delta for block {index}, which was not started")));
                };
                let piece = |key: &str| delta[key].as_str().unwrap_or_default();
                match (block, delta["type"].as_str()) {
                    (Partial::Text(text), Some("text_delta")) => {
                        text.push_str(piece("text"));
                        events(StreamEvent::Text(piece("text").to_owned()));
                    }
                    (Partial::ToolUse { json, .. } | Partial::Provider { json, .. }, Some("input_json_delta")) => {
                        json.push_str(piece("partial_json"))
                    }
                    (Partial::Thinking { text, .. }, Some("thinking_delta")) => {
                        text.push_str(piece("thinking"));
                        events(StreamEvent::Thinking(piece("thinking").to_owned()));
                    }
                    // A delta that repeats the whole signature its block's
                    // start carried is no more of it.
                    (Partial::Thinking { signature, .. }, Some("signature_delta"))
                        if *signature != piece("signature") =>
                    {
                        signature.push_str(piece("signature"));
                    }
                    _ => {}
                }
            }
            "content_block_stop" => {
                let index = index.ok_or_else(|| malformed("content_block_stop without an index"))?;
                let block = match self.blocks.remove(&index) {
                    Some(Partial::Text(text)) => Block::Text { text },
                    Some(Partial::ToolUse { id, name, json, input }) => {
                        // Only input streamed whole is known complete here.
                        let whole = is_whole_object(&json);
                        let call = tool_use_end(id, name, json, input);
                        self.release(events);
                        if whole {
                            events(StreamEvent::ToolUse(call.clone()));
                        } else {
                            self.held = Some(call.clone());
                        }
                        Block::ToolUse(call)
                    }
                    Some(Partial::Thinking { text, signature }) => {
                        let block = Block::Thinking {
                            thinking: text,
                            signature,
                        };
                        events(StreamEvent::ThinkingDone(block.clone()));
                        block
                    }
                    Some(Partial::Redacted(data)) => {
                        let block = Block::RedactedThinking { data };
                        events(StreamEvent::ThinkingDone(block.clone()));
                        block
                    }
                    Some(Partial::Provider { mut block, json }) => {
                        if let (Some(block), Ok(input)) = (block.as_object_mut(), serde_json::from_str(&json)) {
                            block.insert("input".to_owned(), input);
                        }
                        Block::Provider(block)
                    }
                    None => return Err(malformed(format!("block {index} stopped but was not started"))),
                };
                self.done.push((index, block));
            }
            "message_delta" => {
                let delta = &data["delta"];
                // A delta of usage only (`stop_reason: null`) says nothing
                // of how the turn ends: only one with a reason may release
                // a held call or set the stop.
                if let Some(reason) = delta["stop_reason"].as_str() {
                    let stop = stop_reason(Some(reason), delta["stop_sequence"].as_str());
                    // A call cut off with its turn (or held in a turn that
                    // stopped for a reason not known) never starts early;
                    // the loop answers it from the whole message.
                    if stop.interrupts() {
                        self.held = None;
                    } else {
                        self.release(events);
                    }
                    self.stop = Some(stop);
                }
                usage(&data["usage"], &mut self.usage);
            }
            "message_stop" => {
                match &self.stop {
                    // No reason came: a held call whose input was cut
                    // short takes the turn as cut off at its token limit
                    // (as the Chat Completions client takes a stream that
                    // ends without a finish_reason); one with no input
                    // streamed runs on its start's, as a call without
                    // parameters would.
                    None if self
                        .held
                        .as_ref()
                        .is_some_and(|call| call.raw_arguments.as_deref().is_some_and(is_cut_short)) =>
                    {
                        self.held = None;
                        self.stop = Some(ModelStop::MaxTokens);
                    }
                    Some(stop) if stop.interrupts() => {}
                    _ => self.release(events),
                }
                self.finished = true;
                return Ok(true);
            }
            "error" => return Err(http::stream_error(&data)),
            _ => {}
        }
        Ok(false)
    }
}

impl StreamState {
    /// Reports the held call: it is known to be whole.
    fn release(&mut self, events: &mut (dyn FnMut(StreamEvent) + Send)) {
        if let Some(call) = self.held.take() {
            events(StreamEvent::ToolUse(call));
        }
    }

    /// A tool_use block's start: its id and name checked as the
    /// non-streamed parser checks them.
    fn tool_use_start(&mut self, block: &Value) -> Result<Partial, ModelError> {
        let (id, name) =
            call_id_and_name(&block["id"], &block["name"], "a tool_use block").map_err(|e| malformed(e.to_string()))?;
        check_call_id(id, &mut self.call_ids).map_err(|e| malformed(e.to_string()))?;
        Ok(Partial::ToolUse {
            id: id.to_owned(),
            name: name.to_owned(),
            json: String::new(),
            input: block.get("input").cloned().unwrap_or_else(|| json!({})),
        })
    }

    fn finish(mut self) -> Result<ModelResponse, ModelError> {
        if !self.finished {
            return Err(malformed("the stream ended before message_stop"));
        }
        // A call never dropped: one whose block never ended is an error.
        if let Some((index, Partial::ToolUse { id, name, .. })) = self
            .blocks
            .iter()
            .find(|(_, block)| matches!(block, Partial::ToolUse { .. }))
        {
            return Err(malformed(format!(
                "the tool_use block {index} (`{}`, id `{}`) had no content_block_stop before message_stop",
                clip(name),
                clip(id)
            )));
        }
        // Text whose block never ended was shown as it streamed: it stays
        // in the answer. (An unended thinking block has no signature to
        // send back with, so it is left out.)
        for (index, block) in std::mem::take(&mut self.blocks) {
            if let Partial::Text(text) = block {
                self.done.push((index, Block::Text { text }));
            }
        }
        self.done.sort_by_key(|(index, _)| *index);
        let content = self.done.into_iter().map(|(_, block)| block).collect();
        let mut response = ModelResponse::new(content, self.stop.unwrap_or(ModelStop::EndTurn));
        response.usage = self.usage;
        response.id = self.id;
        Ok(response)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Input that is no JSON object is kept as text for the registry to
    /// bind and explain, and goes back to the API as an object, which is
    /// all it accepts: one odd call must not break every later request.
    #[test]
    fn input_that_is_no_object_goes_back_as_one() {
        for (input, text) in [
            (json!("{\"path\":\"a\"}"), "\"{\\\"path\\\":\\\"a\\\"}\""),
            (json!(null), "null"),
            (json!([1]), "[1]"),
        ] {
            let body = json!({
                "id": "msg_1",
                "content": [{"type": "tool_use", "id": "toolu_1", "name": "read", "input": input}],
                "stop_reason": "tool_use",
                "usage": {"input_tokens": 1, "output_tokens": 1},
            });
            let response = parse_response(&body).unwrap();
            let call = response.tool_uses().next().unwrap();
            assert_eq!(call.raw_arguments.as_deref(), Some(text), "bound as sent");
            let sent = message_json(&Message::new(Role::Assistant, response.content.clone()));
            assert!(sent["content"][0]["input"].is_object(), "{sent}");
        }
        let streamed = tool_use_end("toolu_1".into(), "read".into(), "[1]".into(), json!({}));
        assert!(streamed.input.is_object());
        assert_eq!(streamed.raw_arguments.as_deref(), Some("[1]"));
    }
}
