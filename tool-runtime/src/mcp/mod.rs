//! MCP (Model Context Protocol) on the official Rust SDK, `rmcp` (feature
//! `mcp`): serve a registry over stdio and streamable HTTP
//! ([`McpServer`]), and mount other servers' tools into a registry
//! ([`McpMounts`], from an [`McpConfig`]; over stdio, streamable HTTP at
//! `http://` or `https://`, or the legacy HTTP+SSE transport), where each
//! server's set follows its `tools/list_changed` (and a served registry
//! passes such a change on to its own clients).
//!
//! rmcp's types stay inside this module: the API speaks in the runtime's
//! own types and `serde_json::Value`.

mod config;
mod connections;
mod http;
mod mount;
mod order;
mod server;
mod sessions;
mod sse;

use std::fmt;

use crate::text::clip_at;

/// The most characters of a peer's or a transport's error text kept in an
/// [`McpError`].
const MAX_ERROR_CHARS: usize = 300;

pub use config::{McpConfig, ServerEntry};
pub use http::{DEFAULT_MAX_SESSIONS, HttpOptions, McpHttpService};
pub use mount::{McpMounts, MountFailure, MountedServer};
pub use server::{DEFAULT_MAX_IN_FLIGHT, DEFAULT_MAX_MESSAGE_BYTES, McpServer};

/// What went wrong serving or mounting MCP.
#[derive(Debug)]
pub struct McpError {
    kind: McpErrorKind,
    message: String,
    source: Option<Box<dyn std::error::Error + Send + Sync>>,
}

/// The kinds of [`McpError`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum McpErrorKind {
    /// The configuration is wrong (an unknown server type, a missing
    /// command, an address that is not allowed).
    Config,
    /// Reading or writing failed (a file, a socket, a process).
    Io,
    /// The peer broke the protocol, or the session ended.
    Protocol,
}

impl McpError {
    /// What kind of failure this is.
    pub fn kind(&self) -> McpErrorKind {
        self.kind
    }

    pub(crate) fn config(message: impl Into<String>) -> Self {
        McpError {
            kind: McpErrorKind::Config,
            message: message.into(),
            source: None,
        }
    }

    pub(crate) fn io(error: std::io::Error) -> Self {
        McpError {
            kind: McpErrorKind::Io,
            message: error.to_string(),
            source: Some(Box::new(error)),
        }
    }

    /// The peer broke the protocol, as `message` says.
    pub(crate) fn peer(message: impl Into<String>) -> Self {
        McpError {
            kind: McpErrorKind::Protocol,
            message: message.into(),
            source: None,
        }
    }

    /// The peer or the transport failed; the error's text is cut (a
    /// server's error page can be long).
    pub(crate) fn protocol(error: impl std::error::Error + Send + Sync + 'static) -> Self {
        McpError {
            kind: McpErrorKind::Protocol,
            message: clip_at(&error.to_string(), MAX_ERROR_CHARS).into_owned(),
            source: Some(Box::new(error)),
        }
    }
}

impl McpError {
    /// Says where the failure happened: `context: message`.
    pub(crate) fn prefixed(mut self, context: &str) -> Self {
        self.message = format!("{context}: {}", self.message);
        self
    }
}

impl fmt::Display for McpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for McpError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source.as_deref().map(|e| e as &(dyn std::error::Error + 'static))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_peer_s_long_error_text_is_cut() {
        let page = format!("HTTP 404 Not Found: <!DOCTYPE html>{}", "<p>x</p>\n".repeat(5_000));
        let error = McpError::protocol(std::io::Error::other(page));
        let text = error.to_string();
        assert!(text.starts_with("HTTP 404 Not Found: <!DOCTYPE html>"), "{text}");
        assert!(text.len() < 400 && !text.contains('\n'), "{text}");
        assert!(
            std::error::Error::source(&error).is_some(),
            "the whole error stays its source"
        );
    }
}
