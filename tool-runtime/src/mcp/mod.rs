//! MCP (Model Context Protocol) on the official Rust SDK, `rmcp` (feature
//! `mcp`): serve a registry over stdio and streamable HTTP
//! ([`McpServer`]), and mount other servers' tools into a registry
//! ([`McpMounts`], from an [`McpConfig`]; over stdio, streamable HTTP at
//! `http://` or `https://`, or the legacy HTTP+SSE transport), where each
//! server's set follows its `tools/list_changed`.
//!
//! rmcp's types stay inside this module: the API speaks in the runtime's
//! own types and `serde_json::Value`.

mod config;
mod http;
mod mount;
mod order;
mod server;
mod sse;

use std::fmt;

pub use config::{McpConfig, ServerEntry};
pub use http::{HttpOptions, McpHttpService};
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

    pub(crate) fn protocol(error: impl std::error::Error + Send + Sync + 'static) -> Self {
        McpError {
            kind: McpErrorKind::Protocol,
            message: error.to_string(),
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

/// A name or value quoted in a message, cut to 64 characters.
pub(crate) fn clip(text: &str) -> String {
    match text.char_indices().nth(64) {
        Some((end, _)) => format!("{}…(cut)", &text[..end]),
        None => text.to_owned(),
    }
}
