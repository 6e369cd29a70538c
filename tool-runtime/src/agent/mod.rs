//! The agent loop: send the tools to a model, run what it asks for, answer,
//! repeat, keeping the transcript valid whatever happens.
//!
//! ```
//! use tool_runtime::agent::{Agent, StopReason};
//! use tool_runtime::model::{Block, ModelResponse, ModelStop, Scripted};
//! use tool_runtime::ToolRegistry;
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let model = Scripted::new([ModelResponse::new(vec![Block::Text { text: "Hello".into() }], ModelStop::EndTurn)]);
//! let outcome = Agent::new(model, ToolRegistry::new()).max_turns(10).run("Hi").await;
//! assert_eq!(outcome.stop, StopReason::EndTurn);
//! assert_eq!(outcome.text, "Hello");
//! # }
//! ```
//!
//! Every turn's tool calls run concurrently through the registry, and one
//! user message answers them: the `tool_result` blocks first, in the order of
//! the calls, then the notice. That holds when a call is refused, unknown,
//! not allowed, times out, panics or is cancelled, and when the run stops for
//! any reason: a run never leaves a tool call unanswered, except the calls a
//! deferral leaves pending (see [`Agent::resume`]).
//!
//! A turn that may have been cut off (max_tokens, a full context window, a
//! refusal, a stop reason this crate does not know) runs only the calls its
//! stream had already shown complete; the others are answered as not run.
//! When a streamed turn fails or is cancelled after calls of it started,
//! those calls stay in the transcript with their results (stopped where
//! they still ran): a call that ran is never forgotten, so a conversation
//! passed back does not make it again unknowingly.

mod adapter;
mod approval;
mod events;
mod outcome;
pub mod repl;

pub use approval::{Approval, Approver};
pub use events::{AgentEvent, EventStream, event_channel};
pub use outcome::{Deferred, Outcome, ResumeError, StopReason};

use std::collections::{BTreeMap, HashMap, HashSet};
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use tokio::task::JoinHandle;

use crate::format::check_call_ids;
use crate::model::{
    Block, Message, Model, ModelError, ModelErrorKind, ModelRequest, ModelStop, Role, StreamEvent, ToolUse, Usage,
};
use crate::text::clip;
use crate::{Cancellation, Tool, ToolCall, ToolDefinition, ToolRegistry, ToolResult};
use adapter::{SharedRegistry, Slots};
use events::EventFn;
use outcome::Slot;

/// The most calls of one turn that run, unless set
/// ([`Agent::max_calls_per_turn`]).
const DEFAULT_MAX_CALLS_PER_TURN: usize = 64;

/// What a notice callback knows after a turn's results.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct TurnInfo {
    /// The turn just finished (from 1).
    pub turn: usize,
    /// The run's turn limit.
    pub max_turns: usize,
    /// Tokens used so far.
    pub usage: Usage,
    /// Tokens left in the budget, when there is one.
    pub budget_left: Option<u64>,
}

type NoticeFn = dyn Fn(&TurnInfo) -> Option<String> + Send + Sync;

/// The loop around a [`Model`] and a [`ToolRegistry`]. Configure it with its
/// builder methods, then [`run`](Agent::run) it as often as needed.
pub struct Agent<M> {
    model: M,
    registry: SharedRegistry,
    max_turns: usize,
    allowed: Option<Vec<String>>,
    disallowed: Vec<String>,
    max_consecutive_errors: usize,
    token_budget: Option<u64>,
    notice: Option<Arc<NoticeFn>>,
    approver: Option<Arc<dyn Approver>>,
    on_event: Option<Arc<EventFn>>,
    early_start: bool,
    max_calls_per_turn: usize,
}

impl<M> std::fmt::Debug for Agent<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent")
            .field("max_turns", &self.max_turns)
            .field("allowed", &self.allowed)
            .field("disallowed", &self.disallowed)
            .field("max_consecutive_errors", &self.max_consecutive_errors)
            .field("token_budget", &self.token_budget)
            .field("early_start", &self.early_start)
            .field("max_calls_per_turn", &self.max_calls_per_turn)
            .finish_non_exhaustive()
    }
}

impl<M: Model> Agent<M> {
    /// A loop over `model` and the tools of `registry`: 25 turns at most,
    /// every tool allowed, 3 failures in a row of one tool stop the run, no
    /// token budget, tools start as soon as a streamed call is complete, at
    /// most 64 calls run per turn.
    pub fn new(model: M, registry: impl Into<Arc<ToolRegistry>>) -> Self {
        Agent {
            model,
            registry: registry.into(),
            max_turns: 25,
            allowed: None,
            disallowed: Vec::new(),
            max_consecutive_errors: 3,
            token_budget: None,
            notice: None,
            approver: None,
            on_event: None,
            early_start: true,
            max_calls_per_turn: DEFAULT_MAX_CALLS_PER_TURN,
        }
    }

    /// The most model calls in one run.
    pub fn max_turns(mut self, turns: usize) -> Self {
        self.max_turns = turns;
        self
    }

    /// Only these tools are offered and run.
    pub fn allow<I: IntoIterator<Item = S>, S: Into<String>>(mut self, names: I) -> Self {
        self.allowed = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// These tools are neither offered nor run.
    pub fn deny<I: IntoIterator<Item = S>, S: Into<String>>(mut self, names: I) -> Self {
        self.disallowed.extend(names.into_iter().map(Into::into));
        self
    }

    /// Stops the run when one tool fails this many times in a row (0: never).
    pub fn max_consecutive_errors(mut self, count: usize) -> Self {
        self.max_consecutive_errors = count;
        self
    }

    /// Stops the run once it has used this many tokens (input and output).
    pub fn token_budget(mut self, tokens: u64) -> Self {
        self.token_budget = Some(tokens);
        self
    }

    /// Text appended after each turn's tool results (never before one).
    pub fn notice(mut self, notice: impl Fn(&TurnInfo) -> Option<String> + Send + Sync + 'static) -> Self {
        self.notice = Some(Arc::new(notice));
        self
    }

    /// Asks `approver` before each call.
    pub fn approver(mut self, approver: impl Approver) -> Self {
        self.approver = Some(Arc::new(approver));
        self
    }

    /// Calls `callback` with every event (see [`event_channel`] for a stream).
    pub fn on_event(mut self, callback: impl Fn(&AgentEvent) + Send + Sync + 'static) -> Self {
        self.on_event = Some(Arc::new(callback));
        self
    }

    /// Whether a tool call starts as soon as its block is complete in a
    /// streamed turn (on by default), or after the whole turn.
    pub fn early_start(mut self, on: bool) -> Self {
        self.early_start = on;
        self
    }

    /// The most calls of one turn that run (64 unless set). The calls past
    /// it are answered, each, as not run because the turn held too many: a
    /// model that sends thousands of calls in one message starts no more
    /// work than this, and every call still gets its one result.
    pub fn max_calls_per_turn(mut self, calls: usize) -> Self {
        self.max_calls_per_turn = calls;
        self
    }

    /// The registry the loop runs calls through.
    pub fn registry(&self) -> &ToolRegistry {
        &self.registry
    }

    /// Runs a conversation that starts with `prompt`. Dropping the future
    /// before it ends (a `tokio::time::timeout` around it, say) tells the
    /// tools it started to stop, as cancelling would.
    pub async fn run(&self, prompt: impl Into<String>) -> Outcome {
        self.run_cancellable(vec![Message::user(prompt)], &Cancellation::new())
            .await
    }

    /// Continues `transcript` (it should end with a user message: add one
    /// to an earlier outcome's transcript) until the run stops. Raising
    /// `cancellation` stops the model call and the running tools; the
    /// transcript stays valid, the calls a streamed turn had started
    /// answered in it.
    ///
    /// The transcript is made to keep the rule every outcome's keeps before
    /// the model sees it: results that answer a message's calls out of
    /// order, or after other blocks, are put first and in order, and a call
    /// no result answers (a deferred outcome's, continued instead of
    /// [resumed](Agent::resume)) gets a result saying it has none, and may
    /// not have run. A transcript with a result that answers no call of the
    /// message before it, or a call answered twice, is not sent: the run
    /// ends at once, a `ModelError` of kind `InvalidRequest` saying why,
    /// the transcript as it was given.
    pub async fn run_cancellable(&self, mut transcript: Vec<Message>, cancellation: &Cancellation) -> Outcome {
        let answered = outcome::answer_unanswered(&mut transcript);
        let state = RunState {
            transcript,
            usage: Usage::default(),
            turns: 0,
            consecutive: BTreeMap::new(),
            text: String::new(),
        };
        match answered {
            Ok(0) => {}
            Ok(count) => tracing::warn!(calls = count, "calls of a transcript passed back had no result"),
            Err(problem) => {
                let mut outcome = state.end(StopReason::ModelError);
                let text = format!("the transcript cannot be sent: {problem}");
                outcome.error = Some(ModelError::new(ModelErrorKind::InvalidRequest, text));
                return outcome;
            }
        }
        self.drive(state, cancellation).await
    }

    /// Resumes a deferred run: `transcript` is the deferred outcome's, as it
    /// ended (with the message whose calls wait), and `results` answer the
    /// pending calls. Make a result with [`Agent::run_pending`] once a
    /// person agreed, or refuse with any error result; a pending call with
    /// no result is answered as not run. A result is matched to its call by
    /// call id, or, when it has none, to the first pending call of its tool
    /// not answered yet.
    ///
    /// # Errors
    ///
    /// Nothing is run or recorded when the transcript does not end with the
    /// deferred calls ([`ResumeError::TranscriptMismatch`]: results placed
    /// after another message would answer nothing), or when a result
    /// answers no pending call ([`ResumeError::UnmatchedResult`]: a call
    /// that ran must not be told to the model as not run). The inputs are
    /// then dropped: [`Deferred::check`] first keeps them.
    pub async fn resume(
        &self,
        mut transcript: Vec<Message>,
        deferred: Deferred,
        results: impl IntoIterator<Item = ToolResult>,
        cancellation: &Cancellation,
    ) -> Result<Outcome, ResumeError> {
        let results: Vec<ToolResult> = results.into_iter().collect();
        // As `Deferred::check`, keeping what it matched.
        deferred.check_transcript(&transcript)?;
        let matched = deferred.match_results(&results)?;
        let mut results: Vec<Option<ToolResult>> = results.into_iter().map(Some).collect();
        let mut answered: Vec<Option<ToolResult>> = matched
            .into_iter()
            .map(|at| at.and_then(|i| results[i].take()))
            .collect();
        let mut state = RunState {
            transcript: Vec::new(),
            usage: deferred.usage,
            turns: deferred.turns,
            consecutive: deferred.consecutive,
            text: String::new(),
        };
        let mut answers = Vec::new();
        for (slot, result) in deferred.slots.into_iter().zip(answered.iter_mut()) {
            answers.push(match slot {
                Slot::Done(block) => block,
                Slot::Pending(call) => {
                    let mut result = result.take().unwrap_or_else(|| {
                        let text = format!("The call of `{}` was not run.", clip(&call.name));
                        adapter::not_run(&call, text, false)
                    });
                    // A result the caller made is held to the same limit as
                    // the registry's own.
                    self.registry.cut_output(&mut result);
                    self.emit(&finished_event(&call, &result, Duration::ZERO));
                    state.record(&call.name, adapter::is_error(&result));
                    adapter::result_block(&call.id, &result)
                }
            });
        }
        state.text = transcript.last().map(Message::text).unwrap_or_default();
        let mut content: Vec<Block> = answers.into_iter().map(Block::ToolResult).collect();
        if let Some(notice) = self.notice_text(&state) {
            content.push(Block::Text { text: notice });
        }
        transcript.push(Message::new(Role::User, content));
        state.transcript = transcript;
        // A turn cut off ends the run once its calls are answered, as it
        // would have without the deferral.
        if let Some(stop) = &deferred.cut_off {
            let (stop, error) = cut_off_ending(stop);
            let mut outcome = state.end(stop);
            outcome.error = error;
            return Ok(outcome);
        }
        Ok(self.drive(state, cancellation).await)
    }

    /// Runs a pending call of a deferred run through the registry, as the
    /// run would have run it (a model sent strict definitions sends `null`
    /// for an optional parameter it leaves out, which then means "not
    /// given"), for [`Agent::resume`]. A call of a tool outside the
    /// allowed set is refused, naming the allowed tools.
    pub async fn run_pending(&self, call: &ToolUse) -> ToolResult {
        if !self.permits(&call.name) {
            let offered = self.offered();
            let available = adapter::available_tools(offered.iter().map(|t| t.definition().name()));
            return adapter::not_available(call, &available);
        }
        let strict_definitions = self.model.sends_strict_tools();
        let made = tokio::time::Instant::now();
        adapter::run(
            &self.registry,
            ToolCall::from(call),
            &Cancellation::new(),
            made,
            strict_definitions,
        )
        .await
    }

    fn emit(&self, event: &AgentEvent) {
        if let Some(callback) = &self.on_event {
            callback(event);
        }
    }

    fn permits(&self, name: &str) -> bool {
        self.allowed.as_ref().is_none_or(|a| a.iter().any(|n| n == name)) && !self.disallowed.iter().any(|n| n == name)
    }

    fn offered(&self) -> Vec<Arc<dyn Tool>> {
        adapter::tools(&self.registry)
            .filter(|t| self.permits(t.definition().name()))
            .collect()
    }

    /// The notice after this turn's results; none when it has no text,
    /// which the API would refuse as an empty block.
    fn notice_text(&self, state: &RunState) -> Option<String> {
        let notice = self.notice.as_ref()?;
        notice(&TurnInfo {
            turn: state.turns,
            max_turns: self.max_turns,
            usage: state.usage,
            budget_left: self.token_budget.map(|b| b.saturating_sub(state.usage.total())),
        })
        .filter(|text| !text.trim().is_empty())
    }

    /// Starts one call on its own task: the allowed check, the approval,
    /// then the registry. The call stops (its tool told through its
    /// context, as on a time-out) when the run is cancelled or when
    /// [`Running::stop`] is called.
    fn start(&self, call: ToolUse, turn: &TurnContext, run: &Cancellation) -> Running {
        let registry = self.registry.clone();
        let slots = turn.slots.clone();
        let available = turn.available.clone();
        let approver = self.approver.clone();
        let on_event = self.on_event.clone();
        // Its `null` for an optional parameter means "not given".
        let strict_definitions = self.model.sends_strict_tools();
        // With a filter, a call must name a tool offered this turn: an
        // unknown name would otherwise be answered by the registry, which
        // lists (and suggests) every tool, the filtered-out ones included.
        let permitted = match &turn.offered {
            Some(offered) => offered.contains(call.name.as_str()),
            None => true,
        };
        // The call's own signal: the body watches it, `Running` raises it,
        // and the run's cancellation is forwarded to it.
        let signal = Cancellation::new();
        // A call started after the run was cancelled (later in the same
        // streamed chunk, say) never runs its tool: its signal is raised
        // before its task can look at it.
        if run.is_cancelled() || turn.caller.is_cancelled() {
            signal.cancel();
        }
        let (cancellation, forward_to, run) = (signal.clone(), signal.clone(), run.clone());
        let started = call.clone();
        let body = async move {
            let emit = |event: AgentEvent| {
                if let Some(callback) = &on_event {
                    callback(&event);
                }
            };
            // `changed`: the note saying the approver changed the
            // arguments. The transcript keeps the model's arguments; the
            // model reads which ones the tool ran with before its result.
            let finish = |result: ToolResult, duration: Duration, changed: Option<String>| {
                emit(finished_event(&call, &result, duration));
                let mut block = adapter::result_block(&call.id, &result);
                if let Some(note) = changed {
                    block
                        .content
                        .insert(0, serde_json::json!({"type": "text", "text": note}));
                }
                Slot::Done(block)
            };
            if !permitted {
                return finish(adapter::not_available(&call, &available), Duration::ZERO, None);
            }
            let mut tool_call = ToolCall::from(&call);
            let mut changed = None;
            if let Some(approver) = approver {
                let decision = tokio::select! {
                    // A cancelled call is not put to the approver.
                    biased;
                    () = cancellation.cancelled() => {
                        return finish(adapter::cancelled_before_it_ran(&call), Duration::ZERO, None);
                    }
                    decision = approver.approve(&tool_call) => decision,
                };
                match decision {
                    Approval::Run => {}
                    Approval::Modify(arguments) => {
                        changed = Some(adapter::changed_arguments_note(&arguments));
                        tool_call = adapter::with_arguments(tool_call, arguments);
                    }
                    Approval::Refuse(message) => {
                        let mut refused = adapter::not_run(&call, message, false);
                        registry.cut_output(&mut refused);
                        return finish(refused, Duration::ZERO, None);
                    }
                    Approval::Defer => return Slot::Pending(call),
                }
            }
            // Made now that it may run (an approver's time never counts):
            // its time limit runs from here, the wait for a slot of the
            // registry's concurrency limit included, as in `call_all`.
            let made = tokio::time::Instant::now();
            let _slot =
                match adapter::slot(&registry, &slots, &tool_call, made, &cancellation, strict_definitions).await {
                    Ok(slot) => slot,
                    // A refusal of changed arguments says they were changed.
                    Err(not_started) => return finish(not_started, Duration::ZERO, changed),
                };
            emit(AgentEvent::ToolCallStarted {
                id: call.id.clone(),
                name: call.name.clone(),
                arguments: adapter::arguments_json(&tool_call),
            });
            let started = tokio::time::Instant::now();
            let result = adapter::run(&registry, tool_call, &cancellation, made, strict_definitions).await;
            finish(result, started.elapsed(), changed)
        };
        let handle = tokio::spawn(async move {
            let forward = async {
                run.cancelled().await;
                forward_to.cancel();
                std::future::pending::<Infallible>().await
            };
            tokio::select! {
                // The run's cancellation reaches the call's signal before
                // the body first looks at it.
                biased;
                never = forward => match never {},
                slot = body => slot,
            }
        });
        Running {
            call: started,
            handle,
            signal,
        }
    }

    /// Runs turns until the run stops. The run's own signal is raised when
    /// the caller's is, and when this future is dropped before it ends
    /// (a `tokio::time::timeout` around `run`, say): either way the tools
    /// it started are told to stop.
    async fn drive(&self, state: RunState, cancellation: &Cancellation) -> Outcome {
        let run = Cancellation::new();
        let _stop_on_drop = StopOnDrop(run.clone());
        let forward = async {
            cancellation.cancelled().await;
            run.cancel();
            std::future::pending::<Infallible>().await
        };
        tokio::select! {
            // The caller's signal first: a run cancelled before it starts
            // never calls the model.
            biased;
            never = forward => match never {},
            outcome = self.turns(state, &run, cancellation) => outcome,
        }
    }

    /// The turns of a run stopped by `cancellation`, the run's own signal,
    /// which [`drive`](Self::drive) raises when the `caller`'s is.
    async fn turns(&self, mut state: RunState, cancellation: &Cancellation, caller: &Cancellation) -> Outcome {
        let slots = adapter::slots(&self.registry);
        loop {
            // Checked before every turn, a resumed run's first included.
            if let Some(stop) = self.stop_before_turn(&state, cancellation) {
                return state.end(stop);
            }
            state.turns += 1;
            let turn = state.turns;
            self.emit(&AgentEvent::TurnStarted { turn });

            // Listed each turn: a mounted server's set may have changed.
            let offered = self.offered();
            let tools: Vec<&ToolDefinition> = offered.iter().map(|t| t.definition()).collect();
            let available: Arc<str> = adapter::available_tools(tools.iter().map(|d| d.name())).into();
            let filtered = self.allowed.is_some() || !self.disallowed.is_empty();
            let context = TurnContext {
                available,
                offered: filtered.then(|| Arc::new(tools.iter().map(|d| d.name().to_owned()).collect())),
                slots: slots.clone(),
                caller: caller.clone(),
            };

            // The model's turn; complete streamed calls start at once.
            let mut started = Started::default();
            let mut streamed_text = false;
            let response = {
                let mut on_stream = |event: StreamEvent| match event {
                    StreamEvent::Text(text) => {
                        streamed_text = true;
                        self.emit(&AgentEvent::Text(text));
                    }
                    StreamEvent::Thinking(text) => self.emit(&AgentEvent::Thinking(text)),
                    StreamEvent::ThinkingDone(block) => started.thinking.push(block),
                    StreamEvent::ToolUse(call) => {
                        // A call without an id could never be answered: the
                        // whole message is refused, so it must not run.
                        if self.early_start
                            && !call.id.is_empty()
                            && !started.contains(&call.id)
                            && started.len() < self.max_calls_per_turn
                        {
                            started.insert(self.start(call, &context, cancellation));
                        }
                    }
                };
                let request = ModelRequest::new(&state.transcript, &tools);
                tokio::select! {
                    // A run cancelled while the model answered starts none
                    // of the answer's calls, even if the answer is whole.
                    biased;
                    () = cancellation.cancelled() => None,
                    response = self.model.respond(request, &mut on_stream) => Some(response),
                }
            };
            let response = match response {
                Some(Ok(response)) => response,
                Some(Err(error)) => {
                    self.keep_started(&mut state, started).await;
                    let mut outcome = state.end(StopReason::ModelError);
                    outcome.error = Some(error);
                    return outcome;
                }
                None => {
                    self.keep_started(&mut state, started).await;
                    return state.end(StopReason::Cancelled);
                }
            };
            state.usage += response.usage;
            self.emit(&AgentEvent::Usage {
                turn: response.usage,
                total: state.usage,
            });
            // A text block of no text (some turns carry one beside their
            // calls) is refused by the API when sent back: it is dropped.
            let mut content = response.content;
            content.retain(|block| !matches!(block, Block::Text { text } if text.trim().is_empty()));
            let assistant = Message::new(Role::Assistant, content);
            let text = assistant.text();
            if !streamed_text && !text.is_empty() {
                self.emit(&AgentEvent::Text(text.clone()));
            }
            let calls: Vec<ToolUse> = assistant.tool_uses().cloned().collect();
            // Each call is answered by its id, so a turn whose calls share
            // one (or have none) cannot be answered: nothing of it runs.
            if let Err(problem) = check_call_ids(calls.iter().map(|call| call.id.as_str())) {
                self.keep_started(&mut state, started).await;
                let mut outcome = state.end(StopReason::ModelError);
                outcome.error = Some(ModelError::new(ModelErrorKind::MalformedResponse, problem.to_string()));
                return outcome;
            }
            // A call the stream started is in the message it ends with (the
            // clients here see to it); were one missing, the call that ran
            // would answer nothing in the transcript: it is kept, with its
            // result, and the turn is malformed.
            if let Some(missing) = started.first_missing_from(&calls) {
                let problem = format!(
                    "the model's message lacks the call `{}` that its stream started",
                    clip(&missing)
                );
                self.keep_started(&mut state, started).await;
                let mut outcome = state.end(StopReason::ModelError);
                outcome.error = Some(ModelError::new(ModelErrorKind::MalformedResponse, problem));
                return outcome;
            }
            // The outcome's text is always of a message the transcript holds.
            state.text = text;
            if !assistant.content.is_empty() {
                state.transcript.push(assistant);
            }

            if calls.is_empty() {
                self.emit(&AgentEvent::TurnFinished {
                    turn,
                    stop: response.stop.clone(),
                });
                // A turn that stopped to use tools and holds none lost its
                // calls (a server whose tool-call parser failed, say): not a
                // finished turn.
                if response.stop == ModelStop::ToolUse {
                    let mut outcome = state.end(StopReason::ModelError);
                    outcome.error = Some(ModelError::new(
                        ModelErrorKind::MalformedResponse,
                        "the model's turn stopped to use tools but holds no tool call",
                    ));
                    return outcome;
                }
                let stop = match response.stop {
                    ModelStop::PauseTurn => continue,
                    ModelStop::MaxTokens | ModelStop::ContextWindowExceeded => StopReason::MaxTokens,
                    ModelStop::Refusal => StopReason::Refusal,
                    ModelStop::StopSequence(_) => StopReason::StopSequence,
                    _ => StopReason::EndTurn,
                };
                return state.end(stop);
            }

            // A turn cut off (max_tokens, a full context window, a refusal,
            // a reason not known) may end in a call whose arguments were
            // cut off too: its calls are answered without running (those a
            // stream already started, known whole, run on), and the run
            // stops as the model did.
            let cut_off = response.stop.interrupts();
            // Every call of the turn runs, up to the limit per turn (the
            // ones the stream started count first); their results answer
            // in order.
            let mut room = self.max_calls_per_turn.saturating_sub(started.len());
            let mut slots = Vec::with_capacity(calls.len());
            // The calls answered as too many: no failure of their tool.
            let mut turned_away = vec![false; calls.len()];
            for (i, call) in calls.iter().enumerate() {
                let fits = started.contains(&call.id) || room > 0;
                if !fits {
                    turned_away[i] = true;
                    slots.push(self.too_many(call, calls.len()));
                    continue;
                }
                if !started.contains(&call.id) {
                    room -= 1;
                }
                let handle = match started.remove(&call.id) {
                    Some(running) if running.is(call) => running.handle,
                    Some(running) if cut_off => {
                        running.stop().await;
                        self.cut_off(call, &response.stop)
                    }
                    // Started from the stream with other arguments than the
                    // message holds: the message's call runs instead.
                    Some(running) => {
                        tracing::warn!(tool = %clip(&call.name), "a streamed call changed after it started; run again");
                        running.stop().await;
                        self.start(call.clone(), &context, cancellation).handle
                    }
                    None if cut_off => self.cut_off(call, &response.stop),
                    None => self.start(call.clone(), &context, cancellation).handle,
                };
                slots.push(handle);
            }
            let mut results = Vec::with_capacity(calls.len());
            for (call, handle) in calls.iter().zip(slots) {
                results.push(match handle.await {
                    Ok(slot) => slot,
                    Err(error) => {
                        let text = format!("The call of `{}` failed before it ran: {error}.", clip(&call.name));
                        let result = adapter::not_run(call, text, error.is_cancelled());
                        self.emit(&finished_event(call, &result, Duration::ZERO));
                        Slot::Done(adapter::result_block(&call.id, &result))
                    }
                });
            }
            for ((call, slot), turned_away) in calls.iter().zip(&results).zip(turned_away) {
                if let Slot::Done(block) = slot
                    && !turned_away
                {
                    state.record(&call.name, block.is_error);
                }
            }
            // A run cancelled while the turn's other calls ran does not
            // wait for its deferred ones: they are answered as not run, and
            // the run ends cancelled at the next turn.
            if cancellation.is_cancelled() {
                for (call, slot) in calls.iter().zip(results.iter_mut()) {
                    if matches!(slot, Slot::Pending(_)) {
                        let result = adapter::cancelled_before_it_ran(call);
                        self.emit(&finished_event(call, &result, Duration::ZERO));
                        state.record(&call.name, adapter::is_error(&result));
                        *slot = Slot::Done(adapter::result_block(&call.id, &result));
                    }
                }
            }
            if results.iter().any(|s| matches!(s, Slot::Pending(_))) {
                let deferred = Deferred {
                    slots: results,
                    turns: state.turns,
                    usage: state.usage,
                    consecutive: std::mem::take(&mut state.consecutive),
                    cut_off: cut_off.then(|| response.stop.clone()),
                };
                self.emit(&AgentEvent::TurnFinished {
                    turn,
                    stop: response.stop,
                });
                let mut outcome = state.end(StopReason::Deferred);
                outcome.deferred = Some(deferred);
                return outcome;
            }
            let mut content: Vec<Block> = results
                .into_iter()
                .filter_map(|s| match s {
                    Slot::Done(block) => Some(Block::ToolResult(block)),
                    Slot::Pending(_) => None,
                })
                .collect();
            if let Some(notice) = self.notice_text(&state) {
                content.push(Block::Text { text: notice });
            }
            state.transcript.push(Message::new(Role::User, content));
            let ending = cut_off.then(|| cut_off_ending(&response.stop));
            self.emit(&AgentEvent::TurnFinished {
                turn,
                stop: response.stop,
            });
            if let Some((stop, error)) = ending {
                let mut outcome = state.end(stop);
                outcome.error = error;
                return outcome;
            }
        }
    }

    /// Keeps the calls a streamed turn started when the turn's message
    /// never came whole (the model failed, the run was cancelled, the
    /// message was malformed): each is stopped where it still runs, and
    /// the transcript gets an assistant message of those calls, in the
    /// order the stream completed them (after the thinking blocks that
    /// completed, which the API wants back with them), then one of their
    /// results. A call
    /// that ran had its effects; dropped from the transcript, it would be
    /// made again by a conversation passed back. (A call without an id
    /// cannot be answered, so it is only stopped.)
    async fn keep_started(&self, state: &mut RunState, mut started: Started) {
        let thinking = std::mem::take(&mut started.thinking);
        let started: Vec<Running> = started.into_ordered().collect();
        // All told at once: one slow to stop does not keep the others going.
        for running in &started {
            running.signal.cancel();
        }
        let mut calls = Vec::new();
        let mut results = Vec::new();
        for running in started {
            let call = running.call.clone();
            let slot = running.stop_for_result().await;
            if call.id.is_empty() {
                continue;
            }
            let block = match slot {
                Ok(Slot::Done(block)) => block,
                Ok(Slot::Pending(_)) => {
                    let text = format!(
                        "The call of `{}` was not run: the model's turn ended before it was complete.",
                        clip(&call.name)
                    );
                    let result = adapter::not_run(&call, text, false);
                    self.emit(&finished_event(&call, &result, Duration::ZERO));
                    adapter::result_block(&call.id, &result)
                }
                Err(error) => {
                    let text = format!("The call of `{}` failed before it ran: {error}.", clip(&call.name));
                    let result = adapter::not_run(&call, text, error.is_cancelled());
                    self.emit(&finished_event(&call, &result, Duration::ZERO));
                    adapter::result_block(&call.id, &result)
                }
            };
            calls.push(Block::ToolUse(call));
            results.push(Block::ToolResult(block));
        }
        if !calls.is_empty() {
            let content = thinking.into_iter().chain(calls).collect();
            state.transcript.push(Message::new(Role::Assistant, content));
            state.transcript.push(Message::new(Role::User, results));
        }
    }

    /// The answer to a call of a turn cut off by `stop` (max_tokens, a
    /// full context window, a refusal, a reason not known), which does not
    /// run.
    fn cut_off(&self, call: &ToolUse, stop: &ModelStop) -> JoinHandle<Slot> {
        let why = match stop {
            ModelStop::Refusal => "the model's turn ended in a refusal".to_owned(),
            ModelStop::ContextWindowExceeded => {
                "the model's turn was cut off when its context window was full".to_owned()
            }
            ModelStop::Other(reason) => format!(
                "the model's turn ended for a reason this crate does not know (`{}`)",
                clip(reason)
            ),
            _ => "the model's turn was cut off at its max_tokens limit".to_owned(),
        };
        let text = format!(
            "The call of `{}` was not run: {why}, so the call may be incomplete.",
            clip(&call.name)
        );
        self.answered_at_once(call, adapter::not_run(call, text, false))
    }

    /// A call answered without running, by `result`.
    fn answered_at_once(&self, call: &ToolUse, result: ToolResult) -> JoinHandle<Slot> {
        self.emit(&finished_event(call, &result, Duration::ZERO));
        let block = adapter::result_block(&call.id, &result);
        tokio::spawn(async move { Slot::Done(block) })
    }

    /// Answers `call`, one of a turn's `count`, as not run: the turn holds
    /// more calls than run per turn.
    fn too_many(&self, call: &ToolUse, count: usize) -> JoinHandle<Slot> {
        let text = format!(
            "The call of `{}` was not run: the turn holds {count} calls, and at most {} run per turn. Make fewer calls at once.",
            clip(&call.name),
            self.max_calls_per_turn
        );
        self.answered_at_once(call, adapter::not_run(call, text, false))
    }

    /// Why the run stops before its next turn, if it does: cancelled, a
    /// tool failed too often in a row, the token budget spent, or the
    /// turns used up.
    fn stop_before_turn(&self, state: &RunState, cancellation: &Cancellation) -> Option<StopReason> {
        if cancellation.is_cancelled() {
            return Some(StopReason::Cancelled);
        }
        if self.max_consecutive_errors > 0
            && let Some((tool, count)) = state
                .consecutive
                .iter()
                .find(|(_, count)| **count >= self.max_consecutive_errors)
        {
            return Some(StopReason::ConsecutiveErrors {
                tool: tool.clone(),
                count: *count,
            });
        }
        if self.token_budget.is_some_and(|budget| state.usage.total() >= budget) {
            return Some(StopReason::Budget);
        }
        (state.turns >= self.max_turns).then_some(StopReason::MaxTurns)
    }
}

/// How a run ends after a turn of calls cut off by `stop`: as the model
/// stopped (max_tokens, a refusal), or, for a reason this crate does not
/// know, with an error that names it (the turn could not be acted on).
fn cut_off_ending(stop: &ModelStop) -> (StopReason, Option<ModelError>) {
    match stop {
        ModelStop::Refusal => (StopReason::Refusal, None),
        ModelStop::Other(reason) => {
            let message = format!(
                "the model ended a turn of tool calls for a reason this crate does not know (`{}`), so the turn may be \
                 incomplete: its calls not already started from the stream were answered as not run",
                clip(reason)
            );
            (
                StopReason::ModelError,
                Some(ModelError::new(ModelErrorKind::MalformedResponse, message)),
            )
        }
        _ => (StopReason::MaxTokens, None),
    }
}

fn finished_event(call: &ToolUse, result: &ToolResult, duration: Duration) -> AgentEvent {
    AgentEvent::ToolCallFinished {
        id: call.id.clone(),
        name: call.name.clone(),
        duration,
        is_error: adapter::is_error(result),
        warnings: adapter::warnings(result),
        errors: adapter::errors(result),
        text: adapter::text(result),
    }
}

/// A call started on its own task.
struct Running {
    /// The call as it was started.
    call: ToolUse,
    handle: JoinHandle<Slot>,
    /// Raised to stop this call alone.
    signal: Cancellation,
}

impl Running {
    /// Whether `call`, as the whole message holds it, is the call started:
    /// the same id and name, and the same arguments (the same text, or
    /// text that parses to the same JSON: a stream and its message may
    /// space it differently).
    fn is(&self, call: &ToolUse) -> bool {
        let started = &self.call;
        let arguments = |call: &ToolUse| match &call.raw_arguments {
            Some(text) => serde_json::from_str::<serde_json::Value>(text).ok(),
            None => Some(call.input.clone()),
        };
        started.id == call.id
            && started.name == call.name
            && (started == call || arguments(started).is_some_and(|a| Some(a) == arguments(call)))
    }

    /// Stops the call, its tool told as on a time-out, and waits for its
    /// task to end; the result is dropped.
    async fn stop(self) {
        let _ = self.stop_for_result().await;
    }

    /// Stops the call as [`Running::stop`] does, and returns what it came
    /// to: its result if it finished first, else its answer as stopped.
    async fn stop_for_result(self) -> Result<Slot, tokio::task::JoinError> {
        self.signal.cancel();
        self.handle.await
    }
}

/// The calls a turn started from its stream, by id, in the order the stream
/// completed them.
#[derive(Default)]
struct Started {
    order: Vec<String>,
    running: HashMap<String, Running>,
    /// The turn's thinking blocks completed so far, in order: kept before
    /// the calls when the turn ends early (the API refuses a turn of calls
    /// sent back without the thinking that opened it).
    thinking: Vec<Block>,
}

impl Started {
    fn contains(&self, id: &str) -> bool {
        self.running.contains_key(id)
    }

    fn insert(&mut self, running: Running) {
        self.order.push(running.call.id.clone());
        self.running.insert(running.call.id.clone(), running);
    }

    fn remove(&mut self, id: &str) -> Option<Running> {
        self.running.remove(id)
    }

    /// How many are held (started, not removed).
    fn len(&self) -> usize {
        self.running.len()
    }

    /// The id of the first call started that `calls` does not hold.
    fn first_missing_from(&self, calls: &[ToolUse]) -> Option<String> {
        let held: HashSet<&str> = calls.iter().map(|call| call.id.as_str()).collect();
        self.order
            .iter()
            .find(|id| self.running.contains_key(*id) && !held.contains(id.as_str()))
            .cloned()
    }

    /// The calls not removed, in order.
    fn into_ordered(mut self) -> impl Iterator<Item = Running> {
        self.order.into_iter().filter_map(move |id| self.running.remove(&id))
    }
}

/// Raises its signal when dropped.
struct StopOnDrop(Cancellation);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

/// What every call of a run shares.
struct TurnContext {
    available: Arc<str>,
    /// The names offered this turn, when a filter (`allow`, `deny`) chose
    /// them; `None` when every tool of the registry is offered.
    offered: Option<Arc<HashSet<String>>>,
    /// The registry's concurrency limit, shared by every call of the run.
    slots: Arc<Slots>,
    /// The caller's signal, raised perhaps a moment before the run's own is.
    caller: Cancellation,
}

struct RunState {
    transcript: Vec<Message>,
    usage: Usage,
    turns: usize,
    /// Failures in a row per tool name.
    consecutive: BTreeMap<String, usize>,
    text: String,
}

impl RunState {
    /// Counts a call's result: a failure adds one to its tool's failures
    /// in a row, a success starts them again.
    /// The name is kept clipped: it is the model's, and a stop reason
    /// quotes it.
    fn record(&mut self, tool: &str, is_error: bool) {
        let count = self.consecutive.entry(clip(tool).into_owned()).or_default();
        *count = if is_error { count.saturating_add(1) } else { 0 };
    }

    fn end(self, stop: StopReason) -> Outcome {
        Outcome {
            text: self.text,
            stop,
            transcript: self.transcript,
            usage: self.usage,
            turns: self.turns,
            deferred: None,
            error: None,
        }
    }
}
