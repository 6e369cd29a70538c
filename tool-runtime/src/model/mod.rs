//! Talking to a model: a provider-neutral transcript ([`Message`], [`Block`]),
//! one turn's request and response, the [`Model`] trait the agent loop
//! drives, and typed errors. With the `models` feature, HTTP clients for the
//! Anthropic Messages API ([`anthropic`]) and OpenAI Chat Completions
//! ([`openai`]).
//!
//! Use [`Scripted`] for tests and offline examples; it answers from a list.

mod error;
mod scripted;
mod types;

#[cfg(feature = "models")]
pub mod anthropic;
#[cfg(feature = "models")]
mod http;
#[cfg(feature = "models")]
pub mod openai;

pub use error::{ModelError, ModelErrorKind};
#[cfg(feature = "models")]
pub use http::RetryPolicy;
pub use scripted::Scripted;
pub use types::{
    Block, Message, ModelRequest, ModelResponse, ModelStop, Role, StreamEvent, ToolChoice, ToolResultBlock, ToolUse,
    Usage,
};

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// The future a [`Model`] returns.
pub type ModelFuture<'a> = Pin<Box<dyn Future<Output = Result<ModelResponse, ModelError>> + Send + 'a>>;

/// Something that answers one turn of a conversation: an HTTP client, a
/// scripted stand-in, a local model.
///
/// `respond` reports what arrives through `events` while the turn streams
/// (text, and each tool call as soon as its block is complete) and returns
/// the whole assistant message. A model that does not stream may report
/// nothing; the loop starts the calls from the returned message.
pub trait Model: Send + Sync {
    /// Answers the conversation in `request`.
    fn respond<'a>(
        &'a self,
        request: ModelRequest<'a>,
        events: &'a mut (dyn FnMut(StreamEvent) + Send),
    ) -> ModelFuture<'a>;

    /// Whether the tools are sent to this model as strict definitions
    /// (every property required, the optional ones nullable), so that it
    /// sends `null` for each optional parameter it leaves unset. The agent
    /// loop then reads such a `null` as "not given" (the default, or
    /// `None`) with no warning, as
    /// [`ToolRegistry::with_strict_definitions`](crate::ToolRegistry::with_strict_definitions)
    /// does for every call. `false` unless a model says otherwise.
    fn sends_strict_tools(&self) -> bool {
        false
    }
}

impl<M: Model + ?Sized> Model for Arc<M> {
    fn respond<'a>(
        &'a self,
        request: ModelRequest<'a>,
        events: &'a mut (dyn FnMut(StreamEvent) + Send),
    ) -> ModelFuture<'a> {
        (**self).respond(request, events)
    }

    fn sends_strict_tools(&self) -> bool {
        (**self).sends_strict_tools()
    }
}

impl<M: Model + ?Sized> Model for Box<M> {
    fn respond<'a>(
        &'a self,
        request: ModelRequest<'a>,
        events: &'a mut (dyn FnMut(StreamEvent) + Send),
    ) -> ModelFuture<'a> {
        (**self).respond(request, events)
    }

    fn sends_strict_tools(&self) -> bool {
        (**self).sends_strict_tools()
    }
}
