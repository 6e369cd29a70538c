//! What a run reports while it goes: as a callback, or as a stream.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::mpsc;

use crate::model::{ModelStop, Usage};

/// One thing that happened during a run.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum AgentEvent {
    /// A turn (one model call) began; turns count from 1.
    TurnStarted {
        /// The turn's number.
        turn: usize,
    },
    /// Text from the model, piece by piece when it streams.
    Text(String),
    /// Thinking from the model, piece by piece when it streams.
    Thinking(String),
    /// A tool call started running (after approval).
    ToolCallStarted {
        /// The call's id.
        id: String,
        /// The tool's name.
        name: String,
        /// The arguments it runs with.
        arguments: Value,
    },
    /// A tool call has its result (also for calls that did not run).
    ToolCallFinished {
        /// The call's id.
        id: String,
        /// The tool's name.
        name: String,
        /// How long it ran (zero when it did not run).
        duration: Duration,
        /// It failed.
        is_error: bool,
        /// The binder's warnings as `code:path`.
        warnings: Vec<String>,
        /// The errors as `code:path`.
        errors: Vec<String>,
        /// The result's text.
        text: String,
    },
    /// The model's token counts for a turn, and the run's total so far.
    Usage {
        /// This turn's usage.
        turn: Usage,
        /// The run's usage so far.
        total: Usage,
    },
    /// A turn ended (its tool results, if any, are in the transcript).
    ///
    /// Not sent for a turn the run ends in without the model's answer (a
    /// model error, a cancellation): the run's outcome says why.
    TurnFinished {
        /// The turn's number.
        turn: usize,
        /// Why the model stopped.
        stop: ModelStop,
    },
}

pub(crate) type EventFn = dyn Fn(&AgentEvent) + Send + Sync;

/// A callback that sends every event to the returned stream; give the
/// callback to [`crate::agent::Agent::on_event`].
pub fn event_channel() -> (impl Fn(&AgentEvent) + Send + Sync + 'static, EventStream) {
    let (sender, receiver) = mpsc::unbounded_channel();
    let callback = move |event: &AgentEvent| {
        let _ = sender.send(event.clone());
    };
    (callback, EventStream { receiver })
}

/// The events of runs, in order; it ends when the agent holding the
/// callback is dropped.
#[derive(Debug)]
pub struct EventStream {
    receiver: mpsc::UnboundedReceiver<AgentEvent>,
}

impl EventStream {
    /// The next event.
    pub async fn next(&mut self) -> Option<AgentEvent> {
        self.receiver.recv().await
    }

    /// The next event if one is waiting.
    pub fn try_next(&mut self) -> Option<AgentEvent> {
        self.receiver.try_recv().ok()
    }
}

impl futures_util::Stream for EventStream {
    type Item = AgentEvent;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<AgentEvent>> {
        self.receiver.poll_recv(cx)
    }
}
