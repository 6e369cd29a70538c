//! Running calls: binding, the time limit, panic isolation, cancellation,
//! and ordered concurrency for the calls of one model message.

use std::any::Any;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicU64, Ordering};

use futures_util::FutureExt as _;
use futures_util::StreamExt as _;

use crate::bind::{self, BoundArguments};
use crate::registry::{CallArguments, ToolCall, ToolRegistry};
use crate::result::{Outcome, ToolResult};
use crate::tool::{Cancellation, Tool, ToolContext};

impl ToolRegistry {
    /// Calls the tool `name` with `arguments` (a `serde_json::Value` or the
    /// raw JSON text a provider sent). Never fails: every problem is an
    /// `is_error` result the model can read.
    ///
    /// Must run inside a Tokio runtime with the time driver enabled.
    pub async fn call(&self, name: &str, arguments: impl Into<CallArguments>) -> ToolResult {
        self.call_one(ToolCall::new(name, arguments)).await
    }

    /// Runs one call.
    pub async fn call_one(&self, call: ToolCall) -> ToolResult {
        self.call_cancellable(call, &Cancellation::new()).await
    }

    /// Runs one call that the caller may stop by raising `cancellation`; a
    /// stopped call is a `Cancelled` error result.
    pub async fn call_cancellable(&self, call: ToolCall, cancellation: &Cancellation) -> ToolResult {
        let ToolCall { id, name, arguments } = call;
        let Some(tool) = self.get(&name) else {
            return ToolResult::unknown_tool(&name, id, self.names());
        };
        let definition = tool.definition();
        let mut map = match self.argument_object(arguments) {
            Ok(map) => map,
            Err(e) => return ToolResult::invalid_arguments(&name, id, vec![e], Vec::new()),
        };
        let report = bind::normalize(definition.params(), &mut map, self.mode_for(definition));
        for warning in &report.warnings {
            tracing::warn!(tool = %name, warning = %warning, detail = %warning.detail, "tool argument coerced");
        }
        if !report.errors.is_empty() {
            return ToolResult::invalid_arguments(&name, id, report.errors, report.warnings);
        }
        let call_id = id.clone().unwrap_or_else(next_call_id);
        let context = ToolContext::new(&call_id, &name, cancellation.clone(), self.states.clone());
        let future = match start(tool, BoundArguments::new(map), context) {
            Ok(Ok(future)) => future,
            Ok(Err(errors)) => {
                return ToolResult::invalid_arguments(&name, id, errors, report.warnings);
            }
            Err(panic) => return panicked(&name, id, &*panic),
        };

        // Held until the call ends: shared for ordinary tools, exclusive
        // for sequential ones.
        let (_shared, _exclusive);
        if definition.is_sequential() {
            _exclusive = self.gate.write().await;
        } else {
            _shared = self.gate.read().await;
        }
        let run = AssertUnwindSafe(future).catch_unwind();
        let timeout = self.settings.timeout;
        let limit = async move {
            match timeout {
                Some(t) => tokio::time::sleep(t).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            finished = run => match finished {
                Ok(output) => ToolResult::from_output(&name, id, output, report.warnings),
                Err(panic) => panicked(&name, id, &*panic),
            },
            () = limit => {
                cancellation.cancel();
                let secs = timeout.map(|t| t.as_secs_f64()).unwrap_or_default();
                let text = format!("The tool `{name}` did not finish within {secs} seconds and was stopped.");
                ToolResult::failure(&name, id, Outcome::TimedOut, text)
            }
            () = cancellation.cancelled() => {
                let text = format!("The call of `{name}` was cancelled before it finished.");
                ToolResult::failure(&name, id, Outcome::Cancelled, text)
            }
        }
    }

    /// Runs the calls of one model message concurrently, at most the
    /// registry's concurrency limit at once (a `sequential` tool alone), and
    /// returns their results in the order of `calls`.
    pub async fn call_all(&self, calls: impl IntoIterator<Item = ToolCall>) -> Vec<ToolResult> {
        futures_util::stream::iter(calls.into_iter().map(|call| self.call_one(call)))
            .buffered(self.settings.concurrency)
            .collect()
            .await
    }
}

type Started = Result<crate::tool::ToolFuture, Vec<crate::codes::CallError>>;

/// Starts the call, catching a panic in the synchronous part (taking the
/// parameters, a plain `fn` tool's body).
fn start(tool: &dyn Tool, arguments: BoundArguments, context: ToolContext) -> std::thread::Result<Started> {
    std::panic::catch_unwind(AssertUnwindSafe(|| tool.invoke(arguments, context)))
}

fn panicked(name: &str, id: Option<String>, panic: &(dyn Any + Send)) -> ToolResult {
    let message = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".to_owned());
    tracing::error!(tool = %name, panic = %message, "tool panicked");
    let text = format!("The tool `{name}` failed unexpectedly (it panicked: {message}).");
    ToolResult::failure(name, id, Outcome::Panicked, text)
}

fn next_call_id() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    format!("call_{}", NEXT.fetch_add(1, Ordering::Relaxed))
}
