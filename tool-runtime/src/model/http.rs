//! Sending a request with retries, and reading the API's errors.

use std::hash::{BuildHasher, Hasher};
use std::time::{Duration, SystemTime};

use serde::ser::{SerializeMap, Serializer};
use serde_json::Value;

use super::{ModelError, ModelErrorKind, StreamEvent};
use crate::ToolDefinition;
use crate::schema::Schema;
use crate::sse::{SseEvent, SseParser};
use crate::text::clip_at;

/// The longest one attempt of a request may take by default, from
/// connecting to the last byte of the answer (see the clients'
/// `total_timeout`): far longer than a model takes to write its longest
/// answer, yet a bound on a server that keeps a stream open with comments
/// and never answers.
pub(crate) const DEFAULT_TOTAL_TIMEOUT: Duration = Duration::from_secs(3600);

/// The HTTP client of a model client: these time limits for connecting and
/// for each read, and no redirect followed. A redirect would carry the
/// request's headers to another address, and reqwest takes off only
/// `Authorization` and cookies on the way, not Anthropic's `x-api-key`;
/// a redirect is an error that names where it points (see
/// [`status_error`]).
pub(crate) fn client(connect: Duration, read: Duration) -> reqwest::Client {
    let builder = || reqwest::Client::builder().redirect(reqwest::redirect::Policy::none());
    builder()
        .connect_timeout(connect)
        .read_timeout(read)
        .build()
        .or_else(|_| builder().build())
        .unwrap_or_default()
}

/// The HTTP client of a model client with the default time limits: 30 s
/// to connect, 600 s for each read.
pub(crate) fn default_client() -> reqwest::Client {
    client(Duration::from_secs(30), Duration::from_secs(600))
}

/// A request body as bytes, its `tools` written with each tool's
/// parameters in declaration order (a `Value`'s maps are ordered by key).
/// The same body gives the same bytes every time, which prompt caching needs.
pub(crate) fn encode_body(body: &Value, tools: &[&ToolDefinition]) -> Result<Vec<u8>, ModelError> {
    let encode = || -> serde_json::Result<Vec<u8>> {
        let Value::Object(map) = body else {
            return serde_json::to_vec(body);
        };
        let mut out = Vec::new();
        let mut serializer = serde_json::Serializer::new(&mut out);
        let mut entries = serializer.serialize_map(Some(map.len()))?;
        for (key, value) in map {
            match value {
                Value::Array(items) if key == "tools" && items.len() == tools.len() => {
                    let ordered: Vec<Schema> = items
                        .iter()
                        .zip(tools)
                        .map(|(item, tool)| Schema::new(item.clone(), &tool.object_shapes()))
                        .collect();
                    entries.serialize_entry(key, &ordered)?;
                }
                _ => entries.serialize_entry(key, value)?,
            }
        }
        entries.end()?;
        Ok(out)
    };
    encode().map_err(|e| {
        ModelError::new(
            ModelErrorKind::MalformedResponse,
            format!("the request could not be encoded: {e}"),
        )
    })
}

/// When and how often a failed request is tried again: HTTP 429, 500, 502,
/// 503, 504 and 529, connection failures, and an error the API reports in
/// a successful answer (a body or a stream that has handed nothing on yet)
/// when it says the server is overloaded, rate limited or failing; with
/// exponential backoff and jitter, waiting what a `retry-after` (or
/// `retry-after-ms`) header asks. One request has one budget and one
/// backoff sequence, whatever fails on each try.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RetryPolicy {
    /// Retries after the first attempt (default 3), for all failures of a
    /// request together.
    pub max_retries: u32,
    /// The first backoff (default 500 ms); it doubles each retry.
    pub initial_delay: Duration,
    /// The longest backoff (default 60 s).
    pub max_delay: Duration,
    /// The longest `retry-after` waited out (default 60 s), whatever the
    /// backoff's cap: a server that asks for a longer wait is not tried
    /// again early; its error is returned at once.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 3,
            initial_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(60),
            max_retry_after: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// No retries.
    pub fn none() -> Self {
        RetryPolicy {
            max_retries: 0,
            ..RetryPolicy::default()
        }
    }

    /// Sets the number of retries.
    pub fn max_retries(mut self, retries: u32) -> Self {
        self.max_retries = retries;
        self
    }

    /// Sets the first backoff and the backoff's cap.
    pub fn delays(mut self, initial: Duration, max: Duration) -> Self {
        self.initial_delay = initial;
        self.max_delay = max;
        self
    }

    /// Sets the longest `retry-after` waited out; a server asking for
    /// longer gets no retry.
    pub fn max_retry_after(mut self, max: Duration) -> Self {
        self.max_retry_after = max;
        self
    }

    /// The wait before retry number `attempt` (0-based): the server's
    /// `retry-after` when it gave one, else backoff with jitter (between half
    /// and all of `initial * 2^attempt`), never more than `max_delay`.
    /// `None` when the server asked for a longer wait than
    /// `max_retry_after`: a retry sooner would only fail again.
    pub(crate) fn delay(&self, attempt: u32, retry_after: Option<Duration>) -> Option<Duration> {
        if let Some(wait) = retry_after {
            return (wait <= self.max_retry_after).then_some(wait);
        }
        let full = self
            .initial_delay
            .saturating_mul(2u32.saturating_pow(attempt.min(20)))
            .min(self.max_delay);
        let half = full / 2;
        // Saturating throughout: delays as long as `Duration::MAX` give the
        // longest wait, never an overflow.
        let nanos = u64::try_from(half.as_nanos()).unwrap_or(u64::MAX);
        let jitter = random() % nanos.saturating_add(1);
        Some(half.saturating_add(Duration::from_nanos(jitter)))
    }
}

fn random() -> u64 {
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or_default(),
    );
    hasher.finish()
}

pub(crate) fn is_retryable_status(status: u16) -> bool {
    matches!(status, 429 | 500 | 502 | 503 | 504 | 529)
}

/// The kinds of failure another attempt may mend: the server overloaded,
/// rate limited or failing, or the connection lost.
fn is_transient(kind: ModelErrorKind) -> bool {
    matches!(
        kind,
        ModelErrorKind::Overloaded | ModelErrorKind::RateLimited | ModelErrorKind::Server | ModelErrorKind::Connection
    )
}

/// `retry-after-ms` (OpenAI) or `retry-after`, in seconds or as an HTTP
/// date (one already past asks for no wait).
pub(crate) fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    retry_after_at(headers, SystemTime::now())
}

/// [`retry_after`] as read at `now`.
fn retry_after_at(headers: &reqwest::header::HeaderMap, now: SystemTime) -> Option<Duration> {
    // Anything longer is the same "too long" to a retry policy.
    const DAY: Duration = Duration::from_secs(86_400);
    let header = |name: &str| Some(headers.get(name)?.to_str().ok()?.trim());
    // A number of units, `per_second` of them to the second; at most a day.
    let count = |text: &str, per_second: f64| {
        let seconds = text.parse::<f64>().ok()? / per_second;
        (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds.min(DAY.as_secs_f64())))
    };
    if let Some(wait) = header("retry-after-ms").and_then(|ms| count(ms, 1000.0)) {
        return Some(wait);
    }
    let value = header("retry-after")?;
    count(value, 1.0).or_else(|| {
        let date = httpdate::parse_http_date(value).ok()?;
        Some(date.duration_since(now).unwrap_or_default().min(DAY))
    })
}

/// A failed attempt: its error, whether another attempt may mend it, and
/// the wait the server asked for.
struct Failure {
    error: ModelError,
    transient: bool,
    retry_after: Option<Duration>,
}

impl Failure {
    /// A failure the answer itself reported (the API's error object, a
    /// stream that broke off): tried again when its kind is transient.
    fn of(error: ModelError) -> Self {
        Failure {
            transient: is_transient(error.kind()),
            error,
            retry_after: None,
        }
    }
}

/// One request's retries: one budget and one backoff sequence, whatever
/// fails (a status, the connection, a stream before anything of it was
/// handed on).
struct Retries<'a> {
    policy: &'a RetryPolicy,
    done: u32,
}

impl<'a> Retries<'a> {
    fn new(policy: &'a RetryPolicy) -> Self {
        Retries { policy, done: 0 }
    }

    /// Waits before the next attempt after `failure`, or hands its error
    /// back when there is none: the failure is not transient, the retries
    /// are spent, or the server asked for a longer wait than the policy
    /// allows.
    async fn again(&mut self, failure: Failure) -> Result<(), ModelError> {
        match self.policy.delay(self.done, failure.retry_after) {
            Some(wait) if failure.transient && self.done < self.policy.max_retries => {
                tracing::debug!(error = %failure.error, ?wait, retry = self.done, "model request failed; retrying");
                tokio::time::sleep(wait).await;
                self.done += 1;
                Ok(())
            }
            _ => Err(failure.error),
        }
    }
}

/// Sends one attempt of what `build` makes: the successful response, or
/// why there is none.
async fn attempt(build: &impl Fn() -> reqwest::RequestBuilder) -> Result<reqwest::Response, Failure> {
    let response = build().send().await.map_err(transport_failure)?;
    if response.status().is_success() {
        return Ok(response);
    }
    let status = response.status().as_u16();
    let retry_after = retry_after(response.headers());
    Err(Failure {
        error: status_error(response).await,
        transient: is_retryable_status(status),
        retry_after,
    })
}

/// A request that failed on the way: tried again when the connection
/// failed or broke off. A request that timed out is not sent again (the
/// limit covers the whole answer), but a connection that could not be made
/// in time is a connection failure like any other.
fn transport_failure(error: reqwest::Error) -> Failure {
    let gave_up = error.is_timeout() && !error.is_connect();
    Failure {
        transient: broke_off(&error) && !gave_up,
        error: transport_error(error),
        retry_after: None,
    }
}

/// Sends what `build` makes and reads the successful answer as JSON,
/// retrying as `policy` says: a retryable status, a connection that failed
/// or broke off (a body that ends early included), and a body holding the
/// API's error object of a transient kind (some gateways answer a failure
/// with status 200). Returns the answer, or the typed error.
pub(crate) async fn send(
    build: impl Fn() -> reqwest::RequestBuilder,
    policy: &RetryPolicy,
) -> Result<Value, ModelError> {
    let mut retries = Retries::new(policy);
    loop {
        let failure = match attempt(&build).await {
            Ok(response) => match bounded_body(response).await {
                Ok(body) => match json_body(&body) {
                    Ok(value) => return Ok(value),
                    Err(error) => Failure::of(error),
                },
                Err(failure) => failure,
            },
            Err(failure) => failure,
        };
        retries.again(failure).await?;
    }
}

/// The most of a successful response read: a whole body, or a stream's
/// events together. A model's answer is far smaller; a server that sends
/// more is not one to wait out.
const MAX_RESPONSE_BYTES: usize = 64 << 20;

fn too_large() -> ModelError {
    malformed(format!("the response is larger than {MAX_RESPONSE_BYTES} bytes"))
}

/// A successful response's whole body, up to [`MAX_RESPONSE_BYTES`] (a
/// larger one is an error no retry mends; one that breaks off is a
/// connection failure).
async fn bounded_body(mut response: reqwest::Response) -> Result<Vec<u8>, Failure> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(transport_failure)? {
        if body.len() + chunk.len() > MAX_RESPONSE_BYTES {
            return Err(Failure::of(too_large()));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// What puts a streamed answer together, one event at a time.
pub(crate) trait StreamReader: Default {
    /// Reads one event, handing on what the caller may act on at once;
    /// true once the stream's last event was read.
    fn event(&mut self, event: SseEvent, events: &mut (dyn FnMut(StreamEvent) + Send)) -> Result<bool, ModelError>;

    /// Whether the answer read so far is whole (its stop reason came), so
    /// that a connection breaking now loses nothing of it but what the
    /// stream adds after (usage, say).
    fn whole(&self) -> bool {
        false
    }
}

/// Whether streamed tool input is a whole JSON object: text that nothing
/// more can be added to and still be JSON, so a call of it is complete.
/// Input cut off mid-way (a turn that hit max_tokens) never is.
pub(crate) fn is_whole_object(input: &str) -> bool {
    input.trim_start().starts_with('{') && serde_json::from_str::<serde::de::IgnoredAny>(input).is_ok()
}

/// Whether a call's argument text is known to be cut short: some text
/// that is no whole JSON value. Empty text (a call without parameters, on
/// some servers), `null` and arguments encoded twice are whole: the binder
/// reads them as the SPEC says.
pub(crate) fn is_cut_short(arguments: &str) -> bool {
    !arguments.trim().is_empty() && serde_json::from_str::<serde::de::IgnoredAny>(arguments).is_err()
}

/// Sends a streamed request and reads its events into a new `S`, retrying
/// as [`send`] does, within the same budget. A stream that fails before
/// anything of it was handed on to `events` (an `overloaded_error` event
/// first thing, a connection that broke) is tried again too: nothing of it
/// can have been acted on. Once something was, its failure is the
/// caller's, unless the answer was already whole when the connection
/// broke: then it is the answer.
pub(crate) async fn stream<S: StreamReader>(
    build: impl Fn() -> reqwest::RequestBuilder,
    policy: &RetryPolicy,
    events: &mut (dyn FnMut(StreamEvent) + Send),
) -> Result<S, ModelError> {
    let mut retries = Retries::new(policy);
    loop {
        let response = match attempt(&build).await {
            Ok(response) => response,
            Err(failure) => {
                retries.again(failure).await?;
                continue;
            }
        };
        let mut state = S::default();
        let mut handed_on = false;
        let read = read_events(response, |event| {
            state.event(event, &mut |e| {
                handed_on = true;
                events(e);
            })
        })
        .await;
        let error = match read {
            Ok(()) => return Ok(state),
            Err(ReadError::Transport(error)) if state.whole() => {
                tracing::debug!(%error, "model stream broke off after its answer was whole; keeping the answer");
                return Ok(state);
            }
            Err(ReadError::Transport(error) | ReadError::Answer(error)) => error,
        };
        if handed_on {
            return Err(error);
        }
        retries.again(Failure::of(error)).await?;
    }
}

/// Whether the connection failed or broke off: no connection was made, the
/// request could not be sent, or a body ended early (reqwest reports that
/// last as a decoding error caused by a body error).
fn broke_off(error: &reqwest::Error) -> bool {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(error) = cause {
        if let Some(error) = error.downcast_ref::<reqwest::Error>()
            && (error.is_connect() || error.is_request() || error.is_body())
        {
            return true;
        }
        cause = error.source();
    }
    false
}

pub(crate) fn transport_error(error: reqwest::Error) -> ModelError {
    let kind = if error.is_timeout() {
        ModelErrorKind::Timeout
    } else if broke_off(&error) {
        ModelErrorKind::Connection
    } else if error.is_decode() {
        ModelErrorKind::MalformedResponse
    } else {
        ModelErrorKind::Other
    };
    let message = match error.url() {
        Some(url) => format!("{} ({url})", error_chain(&error)),
        None => error_chain(&error),
    };
    ModelError::new(kind, message).with_source(error)
}

fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(inner) = source {
        text.push_str(": ");
        text.push_str(&inner.to_string());
        source = inner.source();
    }
    text
}

/// The most of an error response's body read.
const MAX_ERROR_BODY: usize = 64 << 10;

/// The most characters of an API's error message kept.
const MAX_ERROR_MESSAGE_CHARS: usize = 1024;

/// The error a non-success response means, with the API's own message
/// (`{"error": {"type", "message"}}` in both Anthropic's and OpenAI's
/// bodies).
async fn status_error(mut response: reqwest::Response) -> ModelError {
    let status = response.status().as_u16();
    if response.status().is_redirection() {
        return redirect_error(&response);
    }
    // Read up to a bound: an error body is a short message, whatever a
    // server sends.
    let mut body = Vec::new();
    while body.len() < MAX_ERROR_BODY
        && let Ok(Some(chunk)) = response.chunk().await
    {
        body.extend_from_slice(&chunk);
    }
    body.truncate(MAX_ERROR_BODY);
    let parsed: Option<Value> = serde_json::from_slice(&body).ok();
    let error = parsed.as_ref().map(|v| v.get("error").unwrap_or(v));
    let message = error
        .and_then(|e| e.get("message").and_then(Value::as_str).or_else(|| e.as_str()))
        .map(|message| clip_at(message, MAX_ERROR_MESSAGE_CHARS).into_owned())
        .unwrap_or_else(|| {
            let text = String::from_utf8_lossy(&body);
            clip_at(text.trim(), MAX_ERROR_MESSAGE_CHARS).into_owned()
        });
    let mut kind = ModelErrorKind::from_status(status);
    if error.and_then(|e| e.get("type")).and_then(Value::as_str) == Some("overloaded_error") {
        kind = ModelErrorKind::Overloaded;
    }
    ModelError::new(kind, message).with_status(status)
}

/// The error a redirect is: the clients follow none (see [`client`]), so
/// it says where it points, for the user to set as the base URL if that
/// address is meant.
fn redirect_error(response: &reqwest::Response) -> ModelError {
    let status = response.status().as_u16();
    let location = response
        .headers()
        .get(reqwest::header::LOCATION)
        .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned());
    let message = match location {
        Some(location) => format!(
            "the server redirected the request to {}, which is not followed (the API key would go with it); set the \
             base URL to that address if it is meant",
            clip_at(&location, MAX_ERROR_MESSAGE_CHARS)
        ),
        None => "the server answered with a redirect, which is not followed".to_owned(),
    };
    ModelError::new(ModelErrorKind::from_status(status), message).with_status(status)
}

/// The error an API's error object means: an `error` event in a stream,
/// or a body that holds `{"error": {"type", "code", "message"}}` (some
/// gateways answer a failure with status 200). The object may also come
/// bare (`{"type", "message"}`), or as a string (`{"error": "message"}`).
pub(crate) fn stream_error(data: &Value) -> ModelError {
    let error = data.get("error").filter(|e| !e.is_null()).unwrap_or(data);
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .or_else(|| error.as_str())
        .unwrap_or("the stream reported an error");
    let message = clip_at(message, MAX_ERROR_MESSAGE_CHARS);
    ModelError::new(error_kind(error), message)
}

/// The error an `error` event of a stream means, whatever its data holds:
/// the API's error object, or a message as text.
pub(crate) fn event_error(data: &str) -> ModelError {
    match serde_json::from_str::<Value>(data) {
        Ok(value) => stream_error(&value),
        Err(_) if !data.trim().is_empty() => {
            ModelError::new(ModelErrorKind::Other, clip_at(data.trim(), MAX_ERROR_MESSAGE_CHARS))
        }
        Err(_) => ModelError::new(ModelErrorKind::Other, "the stream reported an error"),
    }
}

/// The kind an error object names: by its `type` (Anthropic's and
/// OpenAI's names, and the exception names vLLM sends), else by its `code`
/// (OpenAI's `rate_limit_exceeded`, or the HTTP status some servers put
/// there); `Other` when neither says.
fn error_kind(error: &Value) -> ModelErrorKind {
    let by_name = |name: &str| match name {
        "overloaded_error" => Some(ModelErrorKind::Overloaded),
        "rate_limit_error" | "rate_limit_exceeded" | "RateLimitError" => Some(ModelErrorKind::RateLimited),
        "api_error" | "server_error" | "InternalServerError" => Some(ModelErrorKind::Server),
        "invalid_request_error" | "BadRequestError" => Some(ModelErrorKind::InvalidRequest),
        "authentication_error" | "invalid_api_key" | "AuthenticationError" => Some(ModelErrorKind::Authentication),
        "permission_error" | "PermissionDeniedError" => Some(ModelErrorKind::Permission),
        "not_found_error" | "NotFoundError" => Some(ModelErrorKind::NotFound),
        _ => None,
    };
    let named = |key: &str| error.get(key).and_then(Value::as_str).and_then(by_name);
    let status = || {
        let code = error.get("code").and_then(Value::as_u64)?;
        let status = u16::try_from(code).ok().filter(|s| (400..600).contains(s))?;
        Some(ModelErrorKind::from_status(status))
    };
    named("type")
        .or_else(|| named("code"))
        .or_else(status)
        .unwrap_or(ModelErrorKind::Other)
}

pub(crate) fn malformed(message: impl Into<String>) -> ModelError {
    ModelError::new(ModelErrorKind::MalformedResponse, message)
}

/// Reads a whole body as JSON; a body holding the API's error object is
/// that error, typed.
fn json_body(body: &[u8]) -> Result<Value, ModelError> {
    let value = serde_json::from_slice(body).map_err(|e| malformed(format!("the response is not JSON: {e}")))?;
    match error_object(&value) {
        Some(error) => Err(error),
        None => Ok(value),
    }
}

/// The error a JSON body holding `{"error": {..}}` means.
fn error_object(value: &Value) -> Option<ModelError> {
    value
        .get("error")
        .is_some_and(|e| !e.is_null())
        .then(|| stream_error(value))
}

/// Why a stream was not read to its end.
enum ReadError {
    /// The connection failed or timed out.
    Transport(ModelError),
    /// What arrived is an error: the API's, or not what it documents.
    Answer(ModelError),
}

/// Reads a stream of server-sent events, handing each to `on_event` as it
/// completes; stops early when `on_event` says it has seen the end.
async fn read_events(
    mut response: reqwest::Response,
    mut on_event: impl FnMut(SseEvent) -> Result<bool, ModelError>,
) -> Result<(), ReadError> {
    let mut parser = SseParser::default();
    let mut read = 0;
    // Until an event comes the body is kept, up to a bound: a server may
    // answer a stream with a JSON error body and status 200.
    let mut before_events = Vec::new();
    let mut any_event = false;
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| ReadError::Transport(transport_error(e)))?
    {
        read += chunk.len();
        if read > MAX_RESPONSE_BYTES {
            return Err(ReadError::Answer(too_large()));
        }
        if !any_event && before_events.len() < MAX_ERROR_BODY {
            before_events.extend_from_slice(&chunk);
        }
        let events = parser
            .feed(&chunk)
            .map_err(|e| ReadError::Answer(malformed(e.to_string())))?;
        for event in events {
            any_event = true;
            if on_event(event).map_err(ReadError::Answer)? {
                return Ok(());
            }
        }
    }
    if let Some(event) = parser.finish() {
        on_event(event).map_err(ReadError::Answer)?;
    } else if !any_event
        && let Some(error) = serde_json::from_slice(&before_events)
            .ok()
            .as_ref()
            .and_then(error_object)
    {
        return Err(ReadError::Answer(error));
    }
    Ok(())
}

/// A base URL joined with a path, with exactly one `/` between them.
pub(crate) fn join(base: &str, path: &str) -> String {
    format!("{}/{}", base.trim_end_matches('/'), path.trim_start_matches('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_with_jitter_and_honours_retry_after() {
        let policy = RetryPolicy::default().delays(Duration::from_millis(100), Duration::from_secs(1));
        for attempt in 0..6 {
            let full = Duration::from_millis(100 * 2u64.pow(attempt)).min(Duration::from_secs(1));
            let wait = policy.delay(attempt, None).unwrap();
            assert!(wait >= full / 2 && wait <= full, "attempt {attempt}: {wait:?}");
        }
        assert_eq!(
            policy.delay(0, Some(Duration::from_millis(750))),
            Some(Duration::from_millis(750))
        );
        // The backoff's cap does not cut a server's wait short...
        assert_eq!(
            policy.delay(0, Some(Duration::from_secs(2))),
            Some(Duration::from_secs(2))
        );
        // ... and a longer wait than the policy allows means no retry.
        assert_eq!(policy.delay(0, Some(Duration::from_secs(90))), None);
        let patient = policy.max_retry_after(Duration::from_secs(120));
        assert_eq!(
            patient.delay(0, Some(Duration::from_secs(90))),
            Some(Duration::from_secs(90))
        );
    }

    /// Delays as long as a `Duration` holds give the longest wait: never
    /// an overflow, a division by zero or a panic.
    #[test]
    fn the_longest_delays_saturate() {
        let policy = RetryPolicy::default().delays(Duration::MAX, Duration::MAX);
        for attempt in [0, 1, 20, u32::MAX] {
            let wait = policy.delay(attempt, None).unwrap();
            assert!(wait >= Duration::MAX / 2, "attempt {attempt}: {wait:?}");
        }
        let zero = RetryPolicy::default().delays(Duration::ZERO, Duration::ZERO);
        assert_eq!(zero.delay(3, None), Some(Duration::ZERO));
        let one = RetryPolicy::default().delays(Duration::from_nanos(1), Duration::from_nanos(1));
        assert_eq!(one.delay(0, None), Some(Duration::ZERO));
    }

    #[test]
    fn retry_after_headers() {
        let mut headers = reqwest::header::HeaderMap::new();
        assert_eq!(retry_after(&headers), None);
        headers.insert("retry-after", "2".parse().unwrap());
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(2)));
        headers.insert("retry-after-ms", "250".parse().unwrap());
        assert_eq!(retry_after(&headers), Some(Duration::from_millis(250)));
        // More than a day is a day, in milliseconds too.
        headers.insert("retry-after-ms", "100000000".parse().unwrap());
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(86_400)));
        let mut date = reqwest::header::HeaderMap::new();
        date.insert("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT".parse().unwrap());
        let then = httpdate::parse_http_date("Wed, 21 Oct 2015 07:27:30 GMT").unwrap();
        assert_eq!(retry_after_at(&date, then), Some(Duration::from_secs(30)));
        // A date already past asks for no wait; one a year off, for a day.
        assert_eq!(retry_after(&date), Some(Duration::ZERO));
        let later = then - Duration::from_secs(365 * 86_400);
        assert_eq!(retry_after_at(&date, later), Some(Duration::from_secs(86_400)));
        // The obsolete forms HTTP still asks recipients to read.
        date.insert("retry-after", "Wednesday, 21-Oct-15 07:28:00 GMT".parse().unwrap());
        assert_eq!(retry_after_at(&date, then), Some(Duration::from_secs(30)));
        date.insert("retry-after", "Wed Oct 21 07:28:00 2015".parse().unwrap());
        assert_eq!(retry_after_at(&date, then), Some(Duration::from_secs(30)));
        for junk in ["soon", "-1", "NaN", "Wed, 32 Oct 2015 07:28:00 GMT"] {
            date.insert("retry-after", junk.parse().unwrap());
            assert_eq!(retry_after_at(&date, then), None, "{junk}");
        }
    }

    #[test]
    fn error_objects_are_typed_by_their_type_or_code_and_keep_their_message() {
        use serde_json::json;
        let cases = [
            (
                json!({"error": {"type": "overloaded_error", "message": "Overloaded"}}),
                ModelErrorKind::Overloaded,
                "Overloaded",
            ),
            (
                json!({"error": {"type": "server_error", "message": "m"}}),
                ModelErrorKind::Server,
                "m",
            ),
            (
                json!({"error": {"type": "requests", "code": "rate_limit_exceeded", "message": "m"}}),
                ModelErrorKind::RateLimited,
                "m",
            ),
            (
                json!({"object": "error", "type": "InternalServerError", "code": 500, "message": "m"}),
                ModelErrorKind::Server,
                "m",
            ),
            (
                json!({"error": {"code": 429, "message": "m"}}),
                ModelErrorKind::RateLimited,
                "m",
            ),
            (
                json!({"error": {"code": 200, "message": "m"}}),
                ModelErrorKind::Other,
                "m",
            ),
            (
                json!({"error": "model crashed"}),
                ModelErrorKind::Other,
                "model crashed",
            ),
            (
                json!({"error": {"type": "insufficient_quota", "message": "m"}}),
                ModelErrorKind::Other,
                "m",
            ),
            (json!({"error": null, "message": "m"}), ModelErrorKind::Other, "m"),
            (
                json!({"error": {}}),
                ModelErrorKind::Other,
                "the stream reported an error",
            ),
        ];
        for (data, kind, message) in cases {
            let error = stream_error(&data);
            assert_eq!((error.kind(), error.message()), (kind, message), "{data}");
        }
        assert_eq!(event_error("upstream gone").message(), "upstream gone");
        assert_eq!(event_error("\"upstream gone\"").message(), "upstream gone");
        assert_eq!(event_error("").message(), "the stream reported an error");
        for kind in [
            ModelErrorKind::Overloaded,
            ModelErrorKind::RateLimited,
            ModelErrorKind::Server,
            ModelErrorKind::Connection,
        ] {
            assert!(is_transient(kind));
        }
        for kind in [
            ModelErrorKind::InvalidRequest,
            ModelErrorKind::Timeout,
            ModelErrorKind::MalformedResponse,
            ModelErrorKind::Other,
        ] {
            assert!(!is_transient(kind));
        }
    }

    #[test]
    fn statuses() {
        for status in [429, 500, 502, 503, 504, 529] {
            assert!(is_retryable_status(status));
        }
        for status in [400, 401, 403, 404, 413, 501] {
            assert!(!is_retryable_status(status));
        }
        assert_eq!(
            join("http://h/v1/", "/chat/completions"),
            "http://h/v1/chat/completions"
        );
    }
}
