//! Why a model call failed, as a kind a caller can match on.

use std::error::Error as StdError;
use std::fmt;

/// What kind of failure a [`ModelError`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ModelErrorKind {
    /// The API key is missing or wrong (HTTP 401).
    Authentication,
    /// The key may not do this (HTTP 403).
    Permission,
    /// No such model or endpoint (HTTP 404); check the base URL.
    NotFound,
    /// The API refused the request (HTTP 400, 413, 422); the message says why.
    InvalidRequest,
    /// Too many requests (HTTP 429), after every retry.
    RateLimited,
    /// The API is overloaded (HTTP 529, or an `overloaded_error` in a
    /// stream), after every retry.
    Overloaded,
    /// The server failed (HTTP 5xx), after every retry.
    Server,
    /// No connection could be made or it broke, after every retry.
    Connection,
    /// The server did not answer in time.
    Timeout,
    /// The answer was not what the API documents.
    MalformedResponse,
    /// Any other status.
    Other,
}

impl ModelErrorKind {
    fn describe(self) -> &'static str {
        match self {
            ModelErrorKind::Authentication => "authentication failed",
            ModelErrorKind::Permission => "permission denied",
            ModelErrorKind::NotFound => "not found",
            ModelErrorKind::InvalidRequest => "invalid request",
            ModelErrorKind::RateLimited => "rate limited",
            ModelErrorKind::Overloaded => "overloaded",
            ModelErrorKind::Server => "server error",
            ModelErrorKind::Connection => "connection failed",
            ModelErrorKind::Timeout => "timed out",
            ModelErrorKind::MalformedResponse => "malformed response",
            ModelErrorKind::Other => "request failed",
        }
    }

    /// The kind an HTTP status means.
    pub fn from_status(status: u16) -> Self {
        match status {
            400 | 413 | 422 => ModelErrorKind::InvalidRequest,
            401 => ModelErrorKind::Authentication,
            403 => ModelErrorKind::Permission,
            404 => ModelErrorKind::NotFound,
            408 => ModelErrorKind::Timeout,
            429 => ModelErrorKind::RateLimited,
            529 => ModelErrorKind::Overloaded,
            500..=599 => ModelErrorKind::Server,
            _ => ModelErrorKind::Other,
        }
    }
}

/// A failed model call: its kind, the HTTP status when there was one, and
/// the API's own message.
#[derive(Debug)]
pub struct ModelError {
    kind: ModelErrorKind,
    status: Option<u16>,
    message: String,
    source: Option<Box<dyn StdError + Send + Sync>>,
}

impl ModelError {
    /// An error of this kind with this message.
    pub fn new(kind: ModelErrorKind, message: impl Into<String>) -> Self {
        ModelError {
            kind,
            status: None,
            message: message.into(),
            source: None,
        }
    }

    /// Sets the HTTP status.
    pub fn with_status(mut self, status: u16) -> Self {
        self.status = Some(status);
        self
    }

    /// Keeps the underlying error as the `source()`.
    pub fn with_source(mut self, source: impl StdError + Send + Sync + 'static) -> Self {
        self.source = Some(Box::new(source));
        self
    }

    /// What kind of failure it is.
    pub fn kind(&self) -> ModelErrorKind {
        self.kind
    }

    /// The HTTP status, when the server answered.
    pub fn status(&self) -> Option<u16> {
        self.status
    }

    /// The API's message (or ours when the API gave none).
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "model call failed: {}", self.kind.describe())?;
        if let Some(status) = self.status {
            write!(f, " (HTTP {status})")?;
        }
        if !self.message.is_empty() {
            write!(f, ": {}", self.message)?;
        }
        Ok(())
    }
}

impl StdError for ModelError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        self.source.as_deref().map(|e| e as &(dyn StdError + 'static))
    }
}
