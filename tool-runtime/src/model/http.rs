//! Sending a request with retries, and reading the API's errors.

use std::hash::{BuildHasher, Hasher};
use std::time::Duration;

use serde::ser::{SerializeMap, Serializer};
use serde_json::Value;

use super::{ModelError, ModelErrorKind};
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

/// `retry-after-ms` (OpenAI) or `retry-after` in seconds; an HTTP date is
/// not read (backoff applies).
pub(crate) fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let read = |name: &str| headers.get(name)?.to_str().ok()?.trim().parse::<f64>().ok();
    let seconds = read("retry-after-ms")
        .map(|ms| ms / 1000.0)
        .or_else(|| read("retry-after"))?;
    (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds.min(86_400.0)))
}

/// Sends what `build` makes, retrying as `policy` says; returns a response
/// with a success status, or the typed error.
pub(crate) async fn send(
    build: impl Fn() -> reqwest::RequestBuilder,
    policy: &RetryPolicy,
) -> Result<reqwest::Response, ModelError> {
    let mut attempt = 0;
    loop {
        let last = attempt >= policy.max_retries;
        match build().send().await {
            Ok(response) if response.status().is_success() => return Ok(response),
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
            Err(error) if (error.is_connect() || error.is_request()) && !error.is_timeout() && !last => {
                let wait = policy.delay(attempt, None).unwrap_or(policy.max_delay);
                tracing::debug!(%error, ?wait, attempt, "model request failed to connect; retrying");
                tokio::time::sleep(wait).await;
                attempt += 1;
            }
            Err(error) => return Err(transport_error(error)),
        }
    }
}

pub(crate) fn transport_error(error: reqwest::Error) -> ModelError {
    let kind = if error.is_timeout() {
        ModelErrorKind::Timeout
    } else if error.is_connect() || error.is_request() || error.is_body() {
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

/// The error an `error` event in a stream means.
pub(crate) fn stream_error(data: &Value) -> ModelError {
    let error = data.get("error").unwrap_or(data);
    let message = error["message"].as_str().unwrap_or("the stream reported an error");
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

/// Reads a whole JSON body.
pub(crate) async fn json_body(response: reqwest::Response) -> Result<Value, ModelError> {
    let bytes = response.bytes().await.map_err(transport_error)?;
    serde_json::from_slice(&bytes).map_err(|e| malformed(format!("the response is not JSON: {e}")))
}

/// Reads a stream of server-sent events, handing each to `on_event` as it
/// completes; stops early when `on_event` says it has seen the end.
pub(crate) async fn read_events(
    mut response: reqwest::Response,
    mut on_event: impl FnMut(SseEvent) -> Result<bool, ModelError>,
) -> Result<(), ModelError> {
    let mut parser = SseParser::default();
    while let Some(chunk) = response.chunk().await.map_err(transport_error)? {
        let events = parser.feed(&chunk).map_err(|e| malformed(e.to_string()))?;
        for event in events {
            if on_event(event)? {
                return Ok(());
            }
        }
    }
    if let Some(event) = parser.finish() {
        on_event(event)?;
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
        let mut date = reqwest::header::HeaderMap::new();
        date.insert("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT".parse().unwrap());
        assert_eq!(retry_after(&date), None);
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
