//! The step before each call: run it, refuse it, change it, or defer it.

use std::future::Future;
use std::pin::Pin;

use serde_json::Value;

use crate::ToolCall;

/// What to do with one tool call.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Approval {
    /// Run it as the model asked.
    Run,
    /// Do not run it; the model reads this message as an error result.
    Refuse(String),
    /// Run it with these arguments instead. The transcript keeps the
    /// model's own arguments; its result begins with a text block telling
    /// the model the arguments the call was made with.
    Modify(Value),
    /// Do not decide now: the run stops with this call pending, and
    /// [`crate::agent::Agent::resume`] continues it once its result is known.
    Defer,
}

/// Decides about each call before it runs. A plain
/// `Fn(&ToolCall) -> Approval` is one; implement the trait to ask a person
/// asynchronously.
pub trait Approver: Send + Sync + 'static {
    /// The decision for `call`.
    fn approve<'a>(&'a self, call: &'a ToolCall) -> Pin<Box<dyn Future<Output = Approval> + Send + 'a>>;
}

impl<F> Approver for F
where
    F: Fn(&ToolCall) -> Approval + Send + Sync + 'static,
{
    fn approve<'a>(&'a self, call: &'a ToolCall) -> Pin<Box<dyn Future<Output = Approval> + Send + 'a>> {
        let decision = self(call);
        Box::pin(std::future::ready(decision))
    }
}
