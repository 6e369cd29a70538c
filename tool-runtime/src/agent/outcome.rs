//! How a run ended.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use super::adapter;
use crate::model::{Block, Message, ModelError, ModelStop, Role, ToolResultBlock, ToolUse, Usage};
use crate::result::ToolResult;
use crate::text::clip;

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

    /// The ids of the deferred turn's calls, in order.
    fn call_ids(&self) -> impl Iterator<Item = &str> {
        self.slots.iter().map(|s| match s {
            Slot::Done(block) => block.tool_use_id.as_str(),
            Slot::Pending(call) => call.id.as_str(),
        })
    }

    /// Checks what [`Agent::resume`](super::Agent::resume) would be given,
    /// as it does before it runs or records anything: `transcript` must end
    /// with the message whose calls these are, and each of `results` must
    /// answer a pending call. `resume` takes its inputs, and on an error
    /// they are gone: check first to keep them (results of tools that ran
    /// among them).
    ///
    /// # Errors
    ///
    /// As [`Agent::resume`](super::Agent::resume).
    pub fn check(&self, transcript: &[Message], results: &[ToolResult]) -> Result<(), ResumeError> {
        self.check_transcript(transcript)?;
        self.match_results(results).map(drop)
    }

    pub(super) fn check_transcript(&self, transcript: &[Message]) -> Result<(), ResumeError> {
        let ends_with_the_calls = transcript.last().is_some_and(|last| {
            last.role == Role::Assistant && last.tool_uses().map(|c| c.id.as_str()).eq(self.call_ids())
        });
        if ends_with_the_calls {
            Ok(())
        } else {
            Err(ResumeError::TranscriptMismatch)
        }
    }

    /// For each slot, the index in `results` of its result: by call id, or,
    /// for a result without one, the first pending call of its tool not
    /// answered yet. `None` for a done slot and for a pending call with no
    /// result.
    pub(crate) fn match_results(&self, results: &[ToolResult]) -> Result<Vec<Option<usize>>, ResumeError> {
        let mut matched: Vec<Option<usize>> = vec![None; self.slots.len()];
        let pending = |slot: &Slot, id: Option<&str>, tool: &str| match slot {
            Slot::Pending(call) => match id {
                Some(id) => call.id == id,
                None => call.name == tool,
            },
            Slot::Done(_) => false,
        };
        // Those with an id first, so one without cannot take its place.
        let (with_id, without): (Vec<usize>, Vec<usize>) =
            (0..results.len()).partition(|&i| adapter::call_id(&results[i]).is_some());
        for index in with_id.into_iter().chain(without) {
            let (id, tool) = (adapter::call_id(&results[index]), adapter::tool(&results[index]));
            let Some(at) = (0..self.slots.len()).find(|&i| matched[i].is_none() && pending(&self.slots[i], id, tool))
            else {
                return Err(ResumeError::UnmatchedResult {
                    call_id: id.map(|id| clip(id).into_owned()),
                    tool: clip(tool).into_owned(),
                });
            };
            matched[at] = Some(index);
        }
        Ok(matched)
    }
}

/// Why [`Agent::resume`](super::Agent::resume) could not resume a run.
/// Nothing was run or recorded.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ResumeError {
    /// The transcript does not end with the assistant message whose calls
    /// were deferred: pass the deferred outcome's transcript as it ended.
    TranscriptMismatch,
    /// A result answers no pending call: no pending call has its id (or,
    /// without an id, its tool's name), or another result answered it.
    UnmatchedResult {
        /// The result's call id, if it had one.
        call_id: Option<String>,
        /// The result's tool.
        tool: String,
    },
}

impl fmt::Display for ResumeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ResumeError::TranscriptMismatch => f.write_str(
                "the transcript does not end with the deferred calls; pass the deferred outcome's transcript as it ended",
            ),
            ResumeError::UnmatchedResult {
                call_id: Some(id),
                tool,
            } => write!(f, "the result of `{tool}` for call `{id}` answers no pending call"),
            ResumeError::UnmatchedResult { call_id: None, tool } => {
                write!(f, "the result of `{tool}`, which has no call id, answers no pending call of `{tool}`")
            }
        }
    }
}

impl std::error::Error for ResumeError {}

/// Makes `transcript` keep the rule every outcome's keeps (each assistant
/// message's calls answered, one to one and in order, by the results that
/// open the next user message) where it can be kept without guessing: the
/// results of the next user message are put first, in the calls' order,
/// and a call no result answers gets one saying so (in a new user message,
/// when the next one is the model's or there is none). Returns how many
/// calls got such a result, or what breaks the rule in a way no answer
/// mends: a result that answers no call of the message before it, or a
/// call answered twice.
pub(super) fn answer_unanswered(transcript: &mut Vec<Message>) -> Result<usize, String> {
    let mut answered = 0;
    let mut at = 0;
    while at < transcript.len() {
        let message = &transcript[at];
        let calls: Vec<ToolUse> = match message.role {
            Role::Assistant => message.tool_uses().cloned().collect(),
            _ => Vec::new(),
        };
        at += 1;
        if calls.is_empty() {
            continue;
        }
        let next = transcript.get(at).filter(|next| next.role == Role::User);
        let in_order = next.is_some_and(|next| {
            let leading = next.content.iter().take(calls.len()).map(|block| match block {
                Block::ToolResult(result) => Some(result.tool_use_id.as_str()),
                _ => None,
            });
            leading.eq(calls.iter().map(|call| Some(call.id.as_str())))
                && !next.content[calls.len()..]
                    .iter()
                    .any(|b| matches!(b, Block::ToolResult(_)))
        });
        if in_order {
            continue;
        }
        // Which call each of the next message's blocks answers, checked
        // before anything is moved: a transcript refused stays as it was.
        let mut answers: Vec<Option<usize>> = Vec::new();
        let mut seen = vec![false; calls.len()];
        for block in next.map_or(&[][..], |next| &next.content[..]) {
            let Block::ToolResult(result) = block else {
                answers.push(None);
                continue;
            };
            let Some(i) = calls.iter().position(|call| call.id == result.tool_use_id) else {
                return Err(format!(
                    "message {at} holds a result for `{}`, which the message before it did not call",
                    clip(&result.tool_use_id)
                ));
            };
            if std::mem::replace(&mut seen[i], true) {
                return Err(format!("message {at} answers the call `{}` twice", clip(&calls[i].id)));
            }
            answers.push(Some(i));
        }
        let has_next = next.is_some();
        let mut results: Vec<Option<Block>> = vec![None; calls.len()];
        let mut rest = Vec::new();
        if has_next {
            for (block, answer) in std::mem::take(&mut transcript[at].content).into_iter().zip(answers) {
                match answer {
                    Some(i) => results[i] = Some(block),
                    None => rest.push(block),
                }
            }
        }
        let mut content: Vec<Block> = calls
            .iter()
            .zip(results)
            .map(|(call, result)| {
                result.unwrap_or_else(|| {
                    answered += 1;
                    let text = format!(
                        "The call of `{}` has no result here: it may not have run, or its result was not kept.",
                        clip(&call.name)
                    );
                    Block::ToolResult(adapter::result_block(&call.id, &adapter::not_run(call, text, false)))
                })
            })
            .collect();
        content.append(&mut rest);
        if has_next {
            transcript[at].content = content;
        } else {
            transcript.insert(at, Message::new(Role::User, content));
        }
    }
    Ok(answered)
}
