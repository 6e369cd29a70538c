//! How a run ended.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::model::{Message, ModelError, ModelStop, ToolResultBlock, ToolUse, Usage};

/// Why a run stopped.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum StopReason {
    /// The model finished its answer.
    EndTurn,
    /// The model wrote a stop sequence.
    StopSequence,
    /// The run used its turns.
    MaxTurns,
    /// The run spent its token budget.
    Budget,
    /// One tool failed this many times in a row.
    ConsecutiveErrors {
        /// The tool.
        tool: String,
        /// Its failures in a row.
        count: usize,
    },
    /// An approver deferred calls; see [`Outcome::deferred`].
    Deferred,
    /// The model declined to answer.
    Refusal,
    /// The model ran out of output tokens, or its context window filled
    /// up. Tool calls of that turn are answered as not run (one may be cut
    /// off), except those a stream had already started.
    MaxTokens,
    /// The caller cancelled the run.
    Cancelled,
    /// The model call failed, or its answer could not be acted on (calls
    /// with ids missing or repeated, a turn of calls that stopped for a
    /// reason this crate does not know, a turn that stopped to use tools
    /// but holds no call); see [`Outcome::error`]. Calls a
    /// stream had started before are in the transcript with their results.
    ModelError,
}

impl StopReason {
    /// The reason's snake_case name (`end_turn`, `max_turns`, ...).
    pub fn as_str(&self) -> &'static str {
        match self {
            StopReason::EndTurn => "end_turn",
            StopReason::StopSequence => "stop_sequence",
            StopReason::MaxTurns => "max_turns",
            StopReason::Budget => "budget",
            StopReason::ConsecutiveErrors { .. } => "consecutive_errors",
            StopReason::Deferred => "deferred",
            StopReason::Refusal => "refusal",
            StopReason::MaxTokens => "max_tokens",
            StopReason::Cancelled => "cancelled",
            StopReason::ModelError => "model_error",
        }
    }
}

impl fmt::Display for StopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StopReason::ConsecutiveErrors { tool, count } => {
                write!(f, "consecutive_errors (`{tool}` failed {count} times in a row)")
            }
            other => f.write_str(other.as_str()),
        }
    }
}

/// A run's end: the final text, why it stopped, the transcript (pass it
/// back, after a new user message, to continue), and the usage summed over
/// its turns.
#[derive(Debug)]
#[non_exhaustive]
pub struct Outcome {
    /// The text of the model's last message.
    pub text: String,
    /// Why the run stopped.
    pub stop: StopReason,
    /// The whole conversation. Every tool call in it is answered in the
    /// next message, except the calls pending in [`Outcome::deferred`];
    /// every call that ran is in it, those of a turn that failed or was
    /// cancelled mid-stream included.
    pub transcript: Vec<Message>,
    /// Tokens used over the run.
    pub usage: Usage,
    /// Model calls made.
    pub turns: usize,
    /// The calls waiting for a decision, when the run was deferred.
    pub deferred: Option<Deferred>,
    /// The model's error, when a model call failed.
    pub error: Option<ModelError>,
}

/// The state of a turn whose calls were deferred: the results known so far
/// and the calls still pending. Serializable, so a run can wait for a
/// person across restarts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Deferred {
    pub(crate) slots: Vec<Slot>,
    pub(crate) turns: usize,
    pub(crate) usage: Usage,
    /// Failures in a row per tool, carried over so a resumed run stops
    /// where an uninterrupted one would.
    #[serde(default)]
    pub(crate) consecutive: BTreeMap<String, usize>,
    /// How the deferred turn was cut off (`max_tokens`, a refusal, a
    /// reason not known), if it was: once its calls are answered, the run
    /// ends as that turn did, without asking the model again.
    #[serde(default)]
    pub(crate) cut_off: Option<ModelStop>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Slot {
    Done(ToolResultBlock),
    Pending(ToolUse),
}

impl Deferred {
    /// The calls waiting for their results, in order.
    pub fn pending(&self) -> impl Iterator<Item = &ToolUse> {
        self.slots.iter().filter_map(|s| match s {
            Slot::Pending(call) => Some(call),
            Slot::Done(_) => None,
        })
    }
}
