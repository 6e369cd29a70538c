//! Sending a request with retries, and reading the API's errors.

use std::future::Future;
use std::hash::{BuildHasher, Hasher};
use std::time::{Duration, SystemTime};

use serde::ser::{SerializeMap, Serializer};
use serde_json::Value;

use super::{ModelError, ModelErrorKind, StreamEvent};
use crate::ToolDefinition;
use crate::schema::Schema;
use crate::sse::{SseEvent, SseParser};
use crate::text::clip_at;

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
/// 503, 504 and 529 and connection failures, with exponential backoff and
/// jitter, waiting what a `retry-after` (or `retry-after-ms`) header asks.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RetryPolicy {
    /// Retries after the first attempt (default 3).
    pub max_retries: u32,
    /// The first backoff (default 500 ms); it doubles each retry.
    pub initial_delay: Duration,
    /// The longest backoff, and the longest `retry-after` waited out
    /// (default 60 s): a server that asks for a longer wait is not tried
    /// again early; its error is returned at once.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 3,
            initial_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(60),
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

    /// Sets the first backoff and the cap.
    pub fn delays(mut self, initial: Duration, max: Duration) -> Self {
        self.initial_delay = initial;
        self.max_delay = max;
        self
    }

    /// The wait before retry number `attempt` (0-based): the server's
    /// `retry-after` when it gave one, else backoff with jitter (between half
    /// and all of `initial * 2^attempt`), never more than `max_delay`.
    /// `None` when the server asked for a longer wait than `max_delay`: a
    /// retry sooner would only fail again.
    pub(crate) fn delay(&self, attempt: u32, retry_after: Option<Duration>) -> Option<Duration> {
        if let Some(wait) = retry_after {
            return (wait <= self.max_delay).then_some(wait);
        }
        let full = self
            .initial_delay
            .saturating_mul(2u32.saturating_pow(attempt.min(20)))
            .min(self.max_delay);
        let half = full / 2;
        let nanos = u64::try_from(half.as_nanos()).unwrap_or(u64::MAX);
        Some(half + Duration::from_nanos(if nanos == 0 { 0 } else { random() % (nanos + 1) }))
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

/// Sends what `build` makes and reads a successful response with `read`,
/// retrying as `policy` says; returns what `read` made, or the typed error.
///
/// A connection failure is tried again, a body that breaks off while
/// `read` reads it included (a stream that `read` hands on unread is the
/// caller's to read: its events may already have been acted on).
pub(crate) async fn send<T, R>(
    build: impl Fn() -> reqwest::RequestBuilder,
    policy: &RetryPolicy,
    read: impl Fn(reqwest::Response) -> R,
) -> Result<T, ModelError>
where
    R: Future<Output = Result<T, reqwest::Error>>,
{
    let mut attempt = 0;
    loop {
        let last = attempt >= policy.max_retries;
        let failure = match build().send().await {
            Ok(response) if response.status().is_success() => match read(response).await {
                Ok(value) => return Ok(value),
                Err(failure) => failure,
            },
            Ok(response) => {
                let status = response.status().as_u16();
                let wait = policy.delay(attempt, retry_after(response.headers()));
                if let Some(wait) = wait.filter(|_| is_retryable_status(status) && !last) {
                    tracing::debug!(status, ?wait, attempt, "model request failed; retrying");
                    drop(response);
                    tokio::time::sleep(wait).await;
                    attempt += 1;
                    continue;
                }
                return Err(status_error(response).await);
            }
            Err(failure) => failure,
        };
        // A request that timed out is not sent again (the limit covers
        // the whole answer), but a connection that could not be made in
        // time is a connection failure like any other.
        let gave_up = failure.is_timeout() && !failure.is_connect();
        if !broke_off(&failure) || gave_up || last {
            return Err(transport_error(failure));
        }
        let wait = policy.delay(attempt, None).unwrap_or(policy.max_delay);
        tracing::debug!(error = %failure, ?wait, attempt, "model request failed on the way; retrying");
        tokio::time::sleep(wait).await;
        attempt += 1;
    }
}

/// A successful response as it is, for [`send`]: a stream the caller reads.
pub(crate) async fn unread(response: reqwest::Response) -> Result<reqwest::Response, reqwest::Error> {
    Ok(response)
}

/// The most of a successful response read: a whole body, or a stream's
/// events together. A model's answer is far smaller; a server that sends
/// more is not one to wait out.
const MAX_RESPONSE_BYTES: usize = 64 << 20;

fn too_large() -> ModelError {
    malformed(format!("the response is larger than {MAX_RESPONSE_BYTES} bytes"))
}

/// A successful response's whole body, for [`send`]: `Ok(Err(..))` when it
/// is larger than [`MAX_RESPONSE_BYTES`] (a body that breaks off is the
/// outer error, tried again).
pub(crate) async fn bounded_body(
    mut response: reqwest::Response,
) -> Result<Result<Vec<u8>, ModelError>, reqwest::Error> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        if body.len() + chunk.len() > MAX_RESPONSE_BYTES {
            return Ok(Err(too_large()));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Ok(body))
}

/// What puts a streamed answer together, one event at a time.
pub(crate) trait StreamReader: Default {
    /// Reads one event, handing on what the caller may act on at once;
    /// true once the stream's last event was read.
    fn event(&mut self, event: SseEvent, events: &mut (dyn FnMut(StreamEvent) + Send)) -> Result<bool, ModelError>;
}

/// Sends a streamed request and reads its events into a new `S`, retrying
/// as [`send`] does. A stream that fails before anything of it was handed
/// on to `events` (an `overloaded_error` event first thing, a connection
/// that broke) is also tried again, with the same policy: nothing of it can
/// have been acted on. Once something was, its failure is the caller's.
pub(crate) async fn stream<S: StreamReader>(
    build: impl Fn() -> reqwest::RequestBuilder,
    policy: &RetryPolicy,
    events: &mut (dyn FnMut(StreamEvent) + Send),
) -> Result<S, ModelError> {
    let mut retry = 0;
    loop {
        let response = send(&build, policy, unread).await?;
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
            Err(error) => error,
        };
        let transient = matches!(
            error.kind(),
            ModelErrorKind::Overloaded
                | ModelErrorKind::RateLimited
                | ModelErrorKind::Server
                | ModelErrorKind::Connection
        );
        match policy.delay(retry, None) {
            Some(wait) if transient && !handed_on && retry < policy.max_retries => {
                tracing::debug!(%error, ?wait, retry, "model stream failed before its first event; retrying");
                tokio::time::sleep(wait).await;
                retry += 1;
            }
            _ => return Err(error),
        }
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

/// The error an API's error object means: an `error` event in a stream,
/// or a body that holds `{"error": {"type", "message"}}` (some gateways
/// answer a failure with status 200).
pub(crate) fn stream_error(data: &Value) -> ModelError {
    let error = data.get("error").unwrap_or(data);
    let message = error["message"].as_str().unwrap_or("the stream reported an error");
    let message = clip_at(message, MAX_ERROR_MESSAGE_CHARS);
    let kind = match error["type"].as_str() {
        Some("overloaded_error") => ModelErrorKind::Overloaded,
        Some("rate_limit_error") => ModelErrorKind::RateLimited,
        Some("api_error") => ModelErrorKind::Server,
        Some("invalid_request_error") => ModelErrorKind::InvalidRequest,
        Some("authentication_error") => ModelErrorKind::Authentication,
        Some("permission_error") => ModelErrorKind::Permission,
        Some("not_found_error") => ModelErrorKind::NotFound,
        _ => ModelErrorKind::Other,
    };
    ModelError::new(kind, message)
}

pub(crate) fn malformed(message: impl Into<String>) -> ModelError {
    ModelError::new(ModelErrorKind::MalformedResponse, message)
}

/// Reads a whole body as JSON; a body holding the API's error object is
/// that error, typed.
pub(crate) fn json_body(body: &[u8]) -> Result<Value, ModelError> {
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

/// Reads a stream of server-sent events, handing each to `on_event` as it
/// completes; stops early when `on_event` says it has seen the end.
pub(crate) async fn read_events(
    mut response: reqwest::Response,
    mut on_event: impl FnMut(SseEvent) -> Result<bool, ModelError>,
) -> Result<(), ModelError> {
    let mut parser = SseParser::default();
    let mut read = 0;
    // Until an event comes the body is kept, up to a bound: a server may
    // answer a stream with a JSON error body and status 200.
    let mut before_events = Vec::new();
    let mut any_event = false;
    while let Some(chunk) = response.chunk().await.map_err(transport_error)? {
        read += chunk.len();
        if read > MAX_RESPONSE_BYTES {
            return Err(too_large());
        }
        if !any_event && before_events.len() < MAX_ERROR_BODY {
            before_events.extend_from_slice(&chunk);
        }
        let events = parser.feed(&chunk).map_err(|e| malformed(e.to_string()))?;
        for event in events {
            any_event = true;
            if on_event(event)? {
                return Ok(());
            }
        }
    }
    if let Some(event) = parser.finish() {
        on_event(event)?;
    } else if !any_event
        && let Some(error) = serde_json::from_slice(&before_events)
            .ok()
            .as_ref()
            .and_then(error_object)
    {
        return Err(error);
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
        // A longer wait than the policy allows is not cut short: no retry.
        assert_eq!(policy.delay(0, Some(Duration::from_secs(90))), None);
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
