//! The loop's rules over a scripted model: every stop reason, and the
//! transcript invariant in the paths the HTTP tests do not reach (panics,
//! timeouts, unknown tools, a model call cancelled or failing mid-stream).

mod agent_support;

use std::sync::Arc;
use std::time::Duration;

use agent_support::{Repeat, assert_transcript_valid, registry};
use serde_json::json;
use tool_runtime::agent::{Agent, AgentEvent, StopReason, event_channel};
use tool_runtime::model::{
    Block, Message, Model, ModelError, ModelErrorKind, ModelFuture, ModelRequest, ModelResponse, ModelStop, Scripted,
    StreamEvent, ToolUse, Usage,
};
use tool_runtime::{Cancellation, ToolRegistry, tool};

fn text(text: &str, stop: ModelStop) -> ModelResponse {
    ModelResponse::new(vec![Block::Text { text: text.into() }], stop)
}

fn calls(calls: &[(&str, &str, serde_json::Value)]) -> ModelResponse {
    let blocks = calls
        .iter()
        .map(|(id, name, input)| Block::ToolUse(ToolUse::new(*id, *name, input.clone())))
        .collect();
    ModelResponse::new(blocks, ModelStop::ToolUse).with_usage(Usage::new(10, 5))
}

#[tokio::test]
async fn every_model_stop_reason_ends_the_run_as_documented() {
    for (stop, expected) in [
        (ModelStop::EndTurn, StopReason::EndTurn),
        (ModelStop::MaxTokens, StopReason::MaxTokens),
        (ModelStop::Refusal, StopReason::Refusal),
        (ModelStop::StopSequence(Some("END".into())), StopReason::StopSequence),
        (ModelStop::ContextWindowExceeded, StopReason::MaxTokens),
        (ModelStop::Other("something_new".into()), StopReason::EndTurn),
    ] {
        let outcome = Agent::new(Scripted::new([text("Partial", stop.clone())]), registry())
            .run("Hi")
            .await;
        assert_eq!(outcome.stop, expected, "{stop:?}");
        assert_eq!(outcome.text, "Partial");
    }
}

#[tokio::test]
async fn a_turn_stopped_for_tool_use_without_a_call_is_a_malformed_response() {
    let outcome = Agent::new(Scripted::new([text("Let me look.", ModelStop::ToolUse)]), registry())
        .run("Hi")
        .await;
    assert_eq!(outcome.stop, StopReason::ModelError);
    assert_eq!(outcome.error.map(|e| e.kind()), Some(ModelErrorKind::MalformedResponse));
    assert_eq!(outcome.text, "Let me look.");
    assert_transcript_valid(&outcome.transcript);
}

/// Counts its calls.
#[tool]
async fn counted(#[param(description = "Anything")] _x: Option<String>) -> String {
    COUNTED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    "counted".into()
}

static COUNTED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

#[tokio::test]
async fn a_turn_cut_off_at_max_tokens_or_by_a_refusal_runs_none_of_its_calls() {
    for (stop, expected, why) in [
        (ModelStop::MaxTokens, StopReason::MaxTokens, "max_tokens"),
        (ModelStop::Refusal, StopReason::Refusal, "refusal"),
    ] {
        let mut registry = registry();
        registry.register(Counted).unwrap();
        let mut cut = calls(&[("t1", "counted", json!({})), ("t2", "counted", json!({"_x": "par"}))]);
        cut.stop = stop;
        // Without early start: a stream would have started the calls it
        // reported complete before the stop reason came.
        let outcome = Agent::new(Scripted::new([cut]), registry)
            .early_start(false)
            .run("Go")
            .await;
        assert_eq!(outcome.stop, expected);
        assert_eq!(COUNTED.load(std::sync::atomic::Ordering::SeqCst), 0, "no call ran");
        // Every call is still answered, so the transcript can be sent again.
        assert_transcript_valid(&outcome.transcript);
        let results: Vec<_> = outcome.transcript[2].tool_results().collect();
        assert_eq!(results.len(), 2);
        assert!(
            results.iter().all(|r| r.is_error && r.to_text().contains(why)),
            "{results:?}"
        );
    }
}

#[tokio::test]
async fn a_turn_whose_calls_share_an_id_is_a_malformed_response() {
    for ids in [["t1", "t1"], ["t1", ""]] {
        let mut registry = registry();
        registry.register(Counted).unwrap();
        let mut twice = calls(&[(ids[0], "counted", json!({})), (ids[1], "counted", json!({}))]);
        twice.content.insert(
            0,
            Block::Text {
                text: "Counting twice.".into(),
            },
        );
        // The clients refuse such a stream before reporting the second
        // call; a model of one's own is checked here, once the turn is in.
        let outcome = Agent::new(Scripted::new([twice]), registry)
            .early_start(false)
            .run("Go")
            .await;
        assert_eq!(outcome.stop, StopReason::ModelError, "{ids:?}");
        let error = outcome.error.expect("the model's error");
        assert_eq!(error.kind(), ModelErrorKind::MalformedResponse, "{error}");
        assert_transcript_valid(&outcome.transcript);
        assert_eq!(
            outcome.transcript.len(),
            1,
            "the turn is not kept: {:?}",
            outcome.transcript
        );
        assert_eq!(outcome.text, "", "the text is of no message the transcript holds");
    }
    assert_eq!(COUNTED.load(std::sync::atomic::Ordering::SeqCst), 0, "no call ran");
}

/// Counts its calls, for the test below only.
#[tool]
async fn tallied() -> String {
    TALLIED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    "tallied".into()
}

static TALLIED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Streams one call without an id, then takes its time (a paused clock:
/// until nothing else can run) before the whole message comes.
struct IdlessThenSlow;

impl Model for IdlessThenSlow {
    fn respond<'a>(&'a self, _: ModelRequest<'a>, events: &'a mut (dyn FnMut(StreamEvent) + Send)) -> ModelFuture<'a> {
        Box::pin(async move {
            let call = ToolUse::new("", "tallied", json!({}));
            events(StreamEvent::ToolUse(call.clone()));
            tokio::time::sleep(Duration::from_secs(1)).await;
            Ok(ModelResponse::new(vec![Block::ToolUse(call)], ModelStop::ToolUse))
        })
    }
}

#[tokio::test(start_paused = true)]
async fn a_streamed_call_without_an_id_never_starts_early() {
    let mut registry = registry();
    registry.register(Tallied).unwrap();
    let outcome = Agent::new(IdlessThenSlow, registry).run("Go").await;
    assert_eq!(outcome.stop, StopReason::ModelError);
    assert_eq!(outcome.error.map(|e| e.kind()), Some(ModelErrorKind::MalformedResponse));
    assert_transcript_valid(&outcome.transcript);
    assert_eq!(TALLIED.load(std::sync::atomic::Ordering::SeqCst), 0, "the call ran");
}

#[tokio::test]
async fn pause_turn_sends_the_assistant_message_back() {
    let model = Arc::new(Scripted::new([
        text("Searching...", ModelStop::PauseTurn),
        text(" found it.", ModelStop::EndTurn),
    ]));
    let outcome = Agent::new(model.clone(), registry()).run("Find it").await;
    assert_eq!(outcome.stop, StopReason::EndTurn);
    assert_eq!(outcome.turns, 2);
    let second = &model.requests()[1];
    assert_eq!(second.len(), 2);
    assert_eq!(second[1].text(), "Searching...");
}

#[tool]
/// Panics.
async fn explode(#[param(description = "Ignored")] _x: Option<u8>) -> String {
    panic!("boom")
}

#[tool]
/// Sleeps for an hour.
async fn slow() -> String {
    tokio::time::sleep(Duration::from_secs(3600)).await;
    "late".into()
}

#[tokio::test(start_paused = true)]
async fn panics_timeouts_and_unknown_tools_are_answered_in_order() {
    let mut registry = registry().with_timeout(Some(Duration::from_secs(5)));
    registry.register(Explode).unwrap();
    registry.register(Slow).unwrap();
    let model = Arc::new(Scripted::new([
        calls(&[
            ("t1", "explode", json!({})),
            ("t2", "slow", json!({})),
            ("t3", "no_such_tool", json!({})),
            ("t4", "add", json!({"a": 1, "b": 1})),
        ]),
        text("Done", ModelStop::EndTurn),
    ]));
    let outcome = Agent::new(model.clone(), registry).run("Go").await;
    assert_eq!(outcome.stop, StopReason::EndTurn);
    assert_transcript_valid(&outcome.transcript);
    let answer = &outcome.transcript[2];
    let results: Vec<_> = answer.tool_results().collect();
    let errors: Vec<bool> = results.iter().map(|r| r.is_error).collect();
    assert_eq!(errors, [true, true, true, false]);
    assert!(
        results[2].to_text().contains("no tool named `no_such_tool`"),
        "{}",
        results[2].to_text()
    );
    assert_eq!(results[3].to_text(), "2");
}

#[tokio::test]
async fn events_arrive_as_a_stream_in_order() {
    let (callback, mut events) = event_channel();
    let model = Scripted::new([
        calls(&[("t1", "greet", json!({"name": "Di"}))]),
        text("Hi Di", ModelStop::EndTurn),
    ]);
    let agent = Agent::new(model, registry()).on_event(callback);
    let outcome = agent.run("Greet Di").await;
    assert_eq!(outcome.usage, Usage::new(10, 5));
    drop(agent);
    let mut kinds = Vec::new();
    while let Some(event) = events.next().await {
        kinds.push(match event {
            AgentEvent::TurnStarted { turn } => format!("turn {turn}"),
            AgentEvent::Text(text) => format!("text {text}"),
            AgentEvent::ToolCallStarted { name, arguments, .. } => format!("start {name} {arguments}"),
            AgentEvent::ToolCallFinished {
                name, is_error, text, ..
            } => format!("finish {name} {is_error} {text}"),
            AgentEvent::Usage { total, .. } => format!("usage {}", total.total()),
            AgentEvent::TurnFinished { turn, stop } => format!("end {turn} {stop:?}"),
            other => format!("{other:?}"),
        });
    }
    // Tools report from their own tasks, so only usage (reported by the
    // loop while the tool may already run) has no fixed place in turn 1.
    assert_eq!(kinds.iter().filter(|k| k.starts_with("usage")).count(), 2);
    kinds.retain(|k| !k.starts_with("usage"));
    assert_eq!(
        kinds,
        [
            "turn 1",
            "start greet {\"name\":\"Di\"}",
            "finish greet false Hello, Di!",
            "end 1 ToolUse",
            "turn 2",
            "text Hi Di",
            "end 2 EndTurn",
        ]
    );
}

/// A model that streams one complete tool call, then hangs or fails.
struct Stalls {
    fail: bool,
}

impl Model for Stalls {
    fn respond<'a>(&'a self, _: ModelRequest<'a>, events: &'a mut (dyn FnMut(StreamEvent) + Send)) -> ModelFuture<'a> {
        Box::pin(async move {
            events(StreamEvent::ToolUse(ToolUse::new("t1", "wait_forever", json!({}))));
            if self.fail {
                tokio::task::yield_now().await;
                return Err(ModelError::new(ModelErrorKind::Overloaded, "Overloaded"));
            }
            std::future::pending().await
        })
    }
}

/// The transcript of a run whose turn ended before the model's answer,
/// after the stream started `t1` (`wait_forever`): the call, answered as
/// cancelled, so it is neither unanswered nor forgotten.
fn assert_started_call_answered_as_cancelled(transcript: &[Message]) {
    assert_transcript_valid(transcript);
    assert_eq!(transcript.len(), 3, "{transcript:?}");
    assert_eq!(transcript[0], Message::user("Go"));
    let calls: Vec<&str> = transcript[1].tool_uses().map(|c| c.id.as_str()).collect();
    assert_eq!(calls, ["t1"]);
    let result = transcript[2].tool_results().next().unwrap();
    assert!(result.is_error && result.to_text().contains("cancel"), "{result:?}");
}

#[tokio::test(start_paused = true)]
async fn a_model_call_cancelled_mid_stream_leaves_no_unanswered_call() {
    let cancellation = Cancellation::new();
    let cancel = cancellation.clone();
    let agent = Agent::new(Stalls { fail: false }, registry()).on_event(move |event| {
        if matches!(event, AgentEvent::ToolCallStarted { .. }) {
            cancel.cancel();
        }
    });
    let outcome = agent.run_cancellable(vec![Message::user("Go")], &cancellation).await;
    assert_eq!(outcome.stop, StopReason::Cancelled);
    assert_started_call_answered_as_cancelled(&outcome.transcript);
}

/// A model whose stream says something, then completes a call of
/// `touched`, then waits: the run is cancelled on the text, before the
/// call comes.
struct TextThenCall;

impl Model for TextThenCall {
    fn respond<'a>(&'a self, _: ModelRequest<'a>, events: &'a mut (dyn FnMut(StreamEvent) + Send)) -> ModelFuture<'a> {
        Box::pin(async move {
            events(StreamEvent::Text("Let me look.".into()));
            events(StreamEvent::ToolUse(ToolUse::new("t1", "touched", json!({}))));
            // The call's task gets the thread first.
            tokio::task::yield_now().await;
            std::future::pending().await
        })
    }
}

/// Counts its calls.
#[tool]
async fn touched() -> String {
    TOUCHED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    "touched".into()
}

static TOUCHED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// A call that streams in after the run was cancelled never runs its
/// tool, however the call's task and the run's cancellation are scheduled
/// (run many times on two worker threads, where the call's task may run
/// beside the run: an unordered race would show in some of them).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_streamed_after_the_run_was_cancelled_never_runs() {
    for _ in 0..24 {
        let cancellation = Cancellation::new();
        let cancel = cancellation.clone();
        let mut registry = registry();
        registry.register(Touched).unwrap();
        let agent = Agent::new(TextThenCall, registry).on_event(move |event| {
            if matches!(event, AgentEvent::Text(_)) {
                cancel.cancel();
            }
        });
        let outcome = agent.run_cancellable(vec![Message::user("Go")], &cancellation).await;
        assert_eq!(outcome.stop, StopReason::Cancelled);
        assert_transcript_valid(&outcome.transcript);
        let result = outcome.transcript[2].tool_results().next().unwrap();
        assert!(result.is_error && result.to_text().contains("cancel"), "{result:?}");
    }
    assert_eq!(TOUCHED.load(std::sync::atomic::Ordering::SeqCst), 0, "the tool ran");
}

#[tokio::test(start_paused = true)]
async fn a_model_failing_mid_stream_stops_the_started_tools() {
    let outcome = Agent::new(Stalls { fail: true }, registry()).run("Go").await;
    assert_eq!(outcome.stop, StopReason::ModelError);
    assert_eq!(outcome.error.unwrap().kind(), ModelErrorKind::Overloaded);
    assert_started_call_answered_as_cancelled(&outcome.transcript);
}

/// A model that streams a complete `add` call, waits until the call has
/// had time to run, then fails.
struct FailsAfterAdd;

impl Model for FailsAfterAdd {
    fn respond<'a>(&'a self, _: ModelRequest<'a>, events: &'a mut (dyn FnMut(StreamEvent) + Send)) -> ModelFuture<'a> {
        Box::pin(async move {
            events(StreamEvent::ToolUse(ToolUse::new("t1", "add", json!({"a": 2, "b": 3}))));
            tokio::time::sleep(Duration::from_secs(1)).await;
            Err(ModelError::new(ModelErrorKind::Overloaded, "Overloaded"))
        })
    }
}

/// A call the stream started and that finished before the model failed
/// stays in the transcript with its result: passed back, the conversation
/// knows the call ran and does not have to make it again.
#[tokio::test(start_paused = true)]
async fn a_call_that_ran_before_the_model_failed_stays_in_the_transcript() {
    let outcome = Agent::new(FailsAfterAdd, registry()).run("Add 2 and 3").await;
    assert_eq!(outcome.stop, StopReason::ModelError);
    assert_eq!(outcome.error.unwrap().kind(), ModelErrorKind::Overloaded);
    assert_transcript_valid(&outcome.transcript);
    assert_eq!(outcome.transcript.len(), 3, "{:?}", outcome.transcript);
    assert_eq!(
        outcome.transcript[1].content,
        [Block::ToolUse(ToolUse::new("t1", "add", json!({"a": 2, "b": 3})))]
    );
    let result = outcome.transcript[2].tool_results().next().unwrap();
    assert_eq!((result.to_text().as_str(), result.is_error), ("5", false));

    let model = Arc::new(Scripted::new([text("It is 5.", ModelStop::EndTurn)]));
    let mut transcript = outcome.transcript;
    transcript.push(Message::user("Go on."));
    let outcome = Agent::new(model.clone(), registry())
        .run_cancellable(transcript.clone(), &Cancellation::new())
        .await;
    assert_eq!(outcome.stop, StopReason::EndTurn);
    assert_eq!(model.requests()[0], transcript);
}

/// A model that streams a complete thinking block and a complete `add`
/// call, waits until the call has had time to run, then fails.
struct ThinksThenFails;

impl Model for ThinksThenFails {
    fn respond<'a>(&'a self, _: ModelRequest<'a>, events: &'a mut (dyn FnMut(StreamEvent) + Send)) -> ModelFuture<'a> {
        Box::pin(async move {
            events(StreamEvent::Thinking("Add them.".into()));
            events(StreamEvent::ThinkingDone(thought()));
            events(StreamEvent::ToolUse(ToolUse::new("t1", "add", json!({"a": 2, "b": 3}))));
            tokio::time::sleep(Duration::from_secs(1)).await;
            Err(ModelError::new(ModelErrorKind::Overloaded, "Overloaded"))
        })
    }
}

fn thought() -> Block {
    Block::Thinking {
        thinking: "Add them.".into(),
        signature: "sig-1".into(),
    }
}

/// The calls a failed turn started are kept after the thinking that came
/// before them, signature and all: with thinking on, the API refuses a
/// turn of calls sent back without it.
#[tokio::test(start_paused = true)]
async fn a_failed_turn_keeps_its_thinking_before_the_calls_it_started() {
    let outcome = Agent::new(ThinksThenFails, registry()).run("Add 2 and 3").await;
    assert_eq!(outcome.stop, StopReason::ModelError);
    assert_transcript_valid(&outcome.transcript);
    assert_eq!(
        outcome.transcript[1].content,
        [
            thought(),
            Block::ToolUse(ToolUse::new("t1", "add", json!({"a": 2, "b": 3})))
        ]
    );
}

/// A turn with calls whose stop reason the crate does not know is not
/// known whole: none of its calls runs, each is answered, and the run
/// stops with an error naming the reason.
#[tokio::test]
async fn calls_of_a_turn_with_an_unknown_stop_reason_do_not_run() {
    let mut turn = calls(&[("t1", "add", json!({"a": 1, "b": 2})), ("t2", "greet", json!({}))]);
    turn.stop = ModelStop::Other("something_new".into());
    let model = Arc::new(Scripted::new([turn]));
    let outcome = Agent::new(model.clone(), registry()).early_start(false).run("Go").await;
    assert_eq!(outcome.stop, StopReason::ModelError);
    let error = outcome.error.unwrap();
    assert_eq!(error.kind(), ModelErrorKind::MalformedResponse, "{error}");
    assert!(error.message().contains("something_new"), "{error}");
    assert_eq!(model.requests().len(), 1);
    assert_transcript_valid(&outcome.transcript);
    let results: Vec<_> = outcome.transcript[2].tool_results().collect();
    assert_eq!(results.len(), 2);
    assert!(
        results
            .iter()
            .all(|r| r.is_error && r.to_text().contains("something_new")),
        "{results:?}"
    );
}

#[tokio::test]
async fn a_transcript_passed_back_continues_the_conversation() {
    let model = Arc::new(Scripted::new([
        calls(&[("t1", "add", json!({"a": 1, "b": 2}))]),
        text("3", ModelStop::EndTurn),
        text("6", ModelStop::EndTurn),
    ]));
    let agent = Agent::new(model.clone(), ToolRegistry::new()).allow(["add"]);
    let first = agent.run("1+2").await;
    assert_transcript_valid(&first.transcript);
    let mut transcript: Vec<Message> =
        serde_json::from_value(serde_json::to_value(&first.transcript).unwrap()).unwrap();
    transcript.push(Message::user("times 2"));
    let second = agent.run_cancellable(transcript, &Cancellation::new()).await;
    assert_eq!(second.text, "6");
    assert_eq!(model.requests()[2].len(), 5);
    assert_transcript_valid(&second.transcript);
}

static IN_FLIGHT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
static MOST: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

#[tool]
/// Sleeps a second, counting calls in flight.
async fn nap() -> String {
    use std::sync::atomic::Ordering::SeqCst;
    let now = IN_FLIGHT.fetch_add(1, SeqCst) + 1;
    MOST.fetch_max(now, SeqCst);
    tokio::time::sleep(Duration::from_secs(1)).await;
    IN_FLIGHT.fetch_sub(1, SeqCst);
    "rested".into()
}

#[tokio::test(start_paused = true)]
async fn calls_run_concurrently_within_the_registry_limit() {
    use std::sync::atomic::Ordering::SeqCst;
    for (limit, most) in [(8, 3), (1, 1)] {
        MOST.store(0, SeqCst);
        let mut registry = ToolRegistry::new().with_concurrency(limit);
        registry.register(Nap).unwrap();
        let model = Scripted::new([
            calls(&[
                ("n1", "nap", json!({})),
                ("n2", "nap", json!({})),
                ("n3", "nap", json!({})),
            ]),
            text("Rested", ModelStop::EndTurn),
        ]);
        let outcome = Agent::new(model, registry).run("Nap").await;
        assert_eq!(outcome.stop, StopReason::EndTurn);
        assert_eq!(MOST.load(SeqCst), most, "limit {limit}");
        let ids: Vec<_> = outcome.transcript[2]
            .tool_results()
            .map(|r| r.tool_use_id.clone())
            .collect();
        assert_eq!(ids, ["n1", "n2", "n3"]);
    }
}

#[tokio::test]
async fn without_early_start_calls_wait_for_the_whole_turn() {
    let (callback, mut events) = event_channel();
    let model = Scripted::new([
        calls(&[("t1", "add", json!({"a": 1, "b": 1}))]),
        text("2", ModelStop::EndTurn),
    ]);
    let agent = Agent::new(model, registry()).early_start(false).on_event(callback);
    assert_eq!(agent.run("1+1").await.text, "2");
    drop(agent);
    let mut order = Vec::new();
    while let Some(event) = events.next().await {
        match event {
            AgentEvent::Usage { .. } => order.push("usage"),
            AgentEvent::ToolCallStarted { .. } => order.push("started"),
            _ => {}
        }
    }
    assert_eq!(order, ["usage", "started", "usage"]);
}

/// A model whose first turn streams `streamed`, 500 ms apart (on the
/// paused clock; noting when a later block arrives), then ends with the
/// calls `answered`; every later turn says "Done".
struct Streams {
    streamed: Vec<ToolUse>,
    answered: Vec<ToolUse>,
    log: Arc<std::sync::Mutex<Vec<&'static str>>>,
}

impl Streams {
    /// Streams the two calls a test of early start needs, and answers them.
    fn two_blocks(log: &Arc<std::sync::Mutex<Vec<&'static str>>>) -> Self {
        let calls = vec![
            ToolUse::new("t1", "nap_logged", json!({})),
            ToolUse::new("t2", "add", json!({"a": 1, "b": 1})),
        ];
        Streams {
            streamed: calls.clone(),
            answered: calls,
            log: log.clone(),
        }
    }
}

impl Model for Streams {
    fn respond<'a>(
        &'a self,
        request: ModelRequest<'a>,
        events: &'a mut (dyn FnMut(StreamEvent) + Send),
    ) -> ModelFuture<'a> {
        Box::pin(async move {
            if request.messages.len() > 1 {
                return Ok(text("Done", ModelStop::EndTurn));
            }
            for (i, call) in self.streamed.iter().enumerate() {
                if i > 0 {
                    tokio::time::sleep(Duration::from_millis(500)).await;
                    self.log.lock().unwrap().push("second block arrives");
                }
                events(StreamEvent::ToolUse(call.clone()));
            }
            let blocks = self.answered.iter().cloned().map(Block::ToolUse).collect();
            Ok(ModelResponse::new(blocks, ModelStop::ToolUse))
        })
    }
}

#[tokio::test(start_paused = true)]
async fn early_start_on_the_paused_clock() {
    let log = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = log.clone();
    let agent = Agent::new(Streams::two_blocks(&log), registry_with_nap()).on_event(move |event| {
        if let AgentEvent::ToolCallStarted { name, .. } = event {
            seen.lock().unwrap().push(if name == "nap_logged" {
                "first tool starts"
            } else {
                "second tool starts"
            });
        }
    });
    let outcome = agent.run("Go").await;
    assert_eq!(outcome.stop, StopReason::EndTurn);
    assert_eq!(
        *log.lock().unwrap(),
        ["first tool starts", "second block arrives", "second tool starts"]
    );
    // And without early start the first tool waits for the whole turn.
    log.lock().unwrap().clear();
    let seen = log.clone();
    let agent = Agent::new(Streams::two_blocks(&log), registry_with_nap())
        .early_start(false)
        .on_event(move |event| {
            if let AgentEvent::ToolCallStarted { name, .. } = event {
                seen.lock().unwrap().push(if name == "nap_logged" {
                    "first tool starts"
                } else {
                    "second tool starts"
                });
            }
        });
    agent.run("Go").await;
    assert_eq!(log.lock().unwrap()[0], "second block arrives");
}

#[tool]
/// Sleeps a second.
async fn nap_logged() -> String {
    tokio::time::sleep(Duration::from_secs(1)).await;
    "rested".into()
}

fn registry_with_nap() -> ToolRegistry {
    let mut registry = registry();
    registry.register(NapLogged).unwrap();
    registry
}

#[tool]
/// Dozes for 400 ms.
async fn doze() -> String {
    tokio::time::sleep(Duration::from_millis(400)).await;
    "awake".into()
}

#[tokio::test(start_paused = true)]
async fn the_time_limit_counts_the_wait_for_the_concurrency_limit() {
    let mut registry = ToolRegistry::new()
        .with_concurrency(1)
        .with_timeout(Some(Duration::from_millis(500)));
    registry.register(Doze).unwrap();
    let model = Scripted::new([
        calls(&[
            ("d1", "doze", json!({})),
            ("d2", "doze", json!({})),
            ("d3", "doze", json!({})),
        ]),
        text("Done", ModelStop::EndTurn),
    ]);
    let start = tokio::time::Instant::now();
    let outcome = Agent::new(model, registry).run("Doze").await;
    assert_eq!(outcome.stop, StopReason::EndTurn);
    assert_transcript_valid(&outcome.transcript);
    let results: Vec<_> = outcome.transcript[2].tool_results().collect();
    assert_eq!(results[0].to_text(), "awake");
    // Made at 0 ms, started at 400 ms: its limit ends at 500 ms.
    assert!(results[1].is_error);
    assert!(
        results[1].to_text().contains("did not finish"),
        "{}",
        results[1].to_text()
    );
    // No slot before 500 ms: never run.
    assert!(results[2].is_error);
    assert!(
        results[2].to_text().contains("could not start"),
        "{}",
        results[2].to_text()
    );
    assert_eq!(start.elapsed(), Duration::from_millis(500));
}

#[tokio::test]
async fn a_call_outside_the_allowed_set_gets_a_bounded_answer() {
    let name = "x".repeat(100_000);
    let model = Scripted::new([
        calls(&[("t1", name.as_str(), json!({}))]),
        text("Done", ModelStop::EndTurn),
    ]);
    let outcome = Agent::new(model, registry()).allow(["add"]).run("Go").await;
    assert_transcript_valid(&outcome.transcript);
    let result = outcome.transcript[2].tool_results().next().unwrap().to_text();
    assert!(result.len() < 8 * 1024, "{} bytes", result.len());
    assert!(result.contains("not available in this run"), "{result}");
    assert!(result.contains("The available tools are: `add`."), "{result}");
}

#[tokio::test]
async fn a_streamed_call_that_changed_runs_as_the_message_holds_it() {
    // Streamed with some arguments, then ended with others.
    let model = Streams {
        streamed: vec![ToolUse::new("t1", "add", json!({"a": 1, "b": 1}))],
        answered: vec![ToolUse::new("t1", "add", json!({"a": 2, "b": 2}))],
        log: Arc::default(),
    };
    let outcome = Agent::new(model, registry()).run("Add").await;
    assert_eq!(outcome.stop, StopReason::EndTurn);
    assert_transcript_valid(&outcome.transcript);
    let results: Vec<_> = outcome.transcript[2].tool_results().collect();
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].to_text(), "4");
}

/// Counts its calls, for the test below only.
#[tool]
async fn spaced(#[param(description = "Anything")] x: String) -> String {
    SPACED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    x
}

static SPACED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

#[tokio::test(start_paused = true)]
async fn a_streamed_call_spaced_otherwise_in_its_message_runs_once() {
    // The first call runs while the second block takes its time.
    let second = ToolUse::new("t2", "add", json!({"a": 1, "b": 1}));
    let model = Streams {
        streamed: vec![ToolUse::from_text("t1", "spaced", r#"{"x":"a"}"#), second.clone()],
        answered: vec![ToolUse::from_text("t1", "spaced", r#"{ "x": "a" }"#), second],
        log: Arc::default(),
    };
    let mut registry = registry();
    registry.register(Spaced).unwrap();
    let outcome = Agent::new(model, registry).run("Go").await;
    assert_eq!(outcome.stop, StopReason::EndTurn);
    assert_transcript_valid(&outcome.transcript);
    assert_eq!(SPACED.load(std::sync::atomic::Ordering::SeqCst), 1, "ran once");
    let results: Vec<_> = outcome.transcript[2].tool_results().collect();
    assert_eq!(results[0].to_text(), "a");
}

/// The ids of the `watch` calls told to stop.
static TOLD_TO_STOP: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// Works on a blocking thread until told to stop (at most 10 s).
#[tool]
fn watch(ctx: tool_runtime::ToolContext) -> String {
    let start = std::time::Instant::now();
    while start.elapsed() < Duration::from_secs(10) {
        if ctx.cancellation().is_cancelled() {
            TOLD_TO_STOP.lock().unwrap().push(ctx.call_id().to_owned());
            return "stopped".into();
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    "never told".into()
}

/// Whether the `watch` call `id` is told to stop within 5 s.
async fn told_to_stop(id: &str) -> bool {
    let start = std::time::Instant::now();
    while start.elapsed() < Duration::from_secs(5) {
        if TOLD_TO_STOP.lock().unwrap().iter().any(|told| told == id) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    false
}

/// Streams a complete `watch` call, then fails.
struct FailsAfterWatch;

impl Model for FailsAfterWatch {
    fn respond<'a>(&'a self, _: ModelRequest<'a>, events: &'a mut (dyn FnMut(StreamEvent) + Send)) -> ModelFuture<'a> {
        Box::pin(async move {
            events(StreamEvent::ToolUse(ToolUse::new("w1", "watch", json!({}))));
            tokio::time::sleep(Duration::from_millis(50)).await;
            Err(ModelError::new(ModelErrorKind::Overloaded, "Overloaded"))
        })
    }
}

#[tokio::test]
async fn a_run_that_fails_tells_its_started_tools_to_stop() {
    let mut registry = ToolRegistry::new();
    registry.register(Watch).unwrap();
    let outcome = Agent::new(FailsAfterWatch, registry).run("Watch").await;
    assert_eq!(outcome.stop, StopReason::ModelError);
    assert!(told_to_stop("w1").await);
}

#[tokio::test]
async fn a_resumed_run_keeps_the_budget_and_the_failures_in_a_row() {
    use tool_runtime::ToolCall;
    use tool_runtime::agent::Approval;

    // Over budget when it defers: resuming answers the call and stops.
    let model = Arc::new(Scripted::new([
        calls(&[("t1", "add", json!({"a": 1, "b": 2}))]),
        text("Done", ModelStop::EndTurn),
    ]));
    let agent = Agent::new(model.clone(), registry())
        .token_budget(10)
        .approver(|_: &ToolCall| Approval::Defer);
    let outcome = agent.run("Add").await;
    assert_eq!(outcome.stop, StopReason::Deferred);
    let resumed = agent
        .resume(outcome.transcript, outcome.deferred.unwrap(), [], &Cancellation::new())
        .await
        .unwrap();
    assert_eq!(resumed.stop, StopReason::Budget);
    assert_eq!(model.requests().len(), 1);
    assert_transcript_valid(&resumed.transcript);

    // Two failures, then a third call deferred and refused: three in a row.
    let model = Arc::new(Scripted::new([
        calls(&[("b1", "broken", json!({}))]),
        calls(&[("b2", "broken", json!({}))]),
        calls(&[("b3", "broken", json!({}))]),
        text("Done", ModelStop::EndTurn),
    ]));
    let turns = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen = turns.clone();
    let agent = Agent::new(model.clone(), registry()).approver(move |_: &ToolCall| {
        if seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 2 {
            Approval::Defer
        } else {
            Approval::Run
        }
    });
    let outcome = agent.run("Break").await;
    assert_eq!(outcome.stop, StopReason::Deferred);
    let deferred = outcome.deferred.unwrap();
    // The state survives a save and a restart.
    let deferred: tool_runtime::agent::Deferred =
        serde_json::from_str(&serde_json::to_string(&deferred).unwrap()).unwrap();
    let refused = tool_runtime::ToolResult::new(
        "broken",
        Some("b3".into()),
        tool_runtime::ToolOutput::error("refused by a person"),
    );
    let resumed = agent
        .resume(outcome.transcript, deferred, [refused], &Cancellation::new())
        .await
        .unwrap();
    assert_eq!(
        resumed.stop,
        StopReason::ConsecutiveErrors {
            tool: "broken".into(),
            count: 3
        }
    );
    assert_eq!(model.requests().len(), 3);
    assert_transcript_valid(&resumed.transcript);
}

/// A call started from the stream and deferred, in a turn then cut off:
/// once resumed, the run ends as the cut-off turn did, without asking the
/// model again, and the state that says so survives a save.
#[tokio::test]
async fn a_deferred_call_of_a_cut_off_turn_resumes_into_the_cut_off_ending() {
    use tool_runtime::ToolCall;
    use tool_runtime::agent::Approval;

    for (stop, expected) in [
        (ModelStop::MaxTokens, StopReason::MaxTokens),
        (ModelStop::Refusal, StopReason::Refusal),
        (ModelStop::Other("new_reason".into()), StopReason::ModelError),
    ] {
        let mut turn = calls(&[("t1", "add", json!({"a": 1, "b": 2}))]);
        turn.stop = stop.clone();
        let model = Arc::new(Scripted::new([turn, text("Asked again", ModelStop::EndTurn)]));
        let agent = Agent::new(model.clone(), registry()).approver(|_: &ToolCall| Approval::Defer);
        let outcome = agent.run("Add").await;
        assert_eq!(outcome.stop, StopReason::Deferred, "{stop:?}");
        let deferred = outcome.deferred.unwrap();
        let deferred: tool_runtime::agent::Deferred =
            serde_json::from_str(&serde_json::to_string(&deferred).unwrap()).unwrap();
        let approved = tool_runtime::ToolResult::new("add", Some("t1".into()), tool_runtime::ToolOutput::text("3"));
        let resumed = agent
            .resume(outcome.transcript, deferred, [approved], &Cancellation::new())
            .await
            .unwrap();
        assert_eq!(resumed.stop, expected, "{stop:?}");
        assert_eq!(resumed.error.is_some(), expected == StopReason::ModelError, "{stop:?}");
        assert_eq!(model.requests().len(), 1, "{stop:?}: the model was asked again");
        assert_transcript_valid(&resumed.transcript);
    }
}

/// With a filter, a call of a name the turn did not offer (misspelt, or
/// unknown) is answered with the offered tools only: the answer never
/// names, or suggests, a tool the run keeps from the model.
#[tokio::test]
async fn an_unknown_name_under_a_filter_is_told_only_the_offered_tools() {
    let registry = registry();
    let names = registry.names();
    let denied = names.iter().find(|n| *n != "add").expect("a second tool").clone();
    let misspelt = &denied[..denied.len() - 1];
    let model = Scripted::new([calls(&[("t1", misspelt, json!({}))]), text("Done", ModelStop::EndTurn)]);
    let outcome = Agent::new(model, registry).deny([denied.as_str()]).run("Go").await;
    assert_transcript_valid(&outcome.transcript);
    let result = outcome.transcript[2].tool_results().next().unwrap().to_text();
    assert!(result.contains("not available in this run"), "{result}");
    assert!(!result.contains(&format!("`{denied}`")), "{result}");
}

/// A text block of no text is never sent back, nor an empty notice.
#[tokio::test]
async fn empty_text_blocks_stay_out_of_the_transcript() {
    let mut with_call = calls(&[("t1", "add", json!({"a": 1, "b": 2}))]);
    with_call.content.insert(0, Block::Text { text: String::new() });
    let model = Scripted::new([with_call, text("Done", ModelStop::EndTurn)]);
    let outcome = Agent::new(model, registry())
        .notice(|_| Some(" ".into()))
        .run("Add")
        .await;
    assert_eq!(outcome.stop, StopReason::EndTurn);
    for message in &outcome.transcript {
        for block in &message.content {
            if let Block::Text { text } = block {
                assert!(!text.trim().is_empty(), "{:?}", outcome.transcript);
            }
        }
    }
}

/// A run given up by dropping its future (a timeout around `run`) tells the
/// tools it started to stop.
#[tokio::test]
async fn a_dropped_run_tells_its_tools_to_stop() {
    let mut registry = ToolRegistry::new();
    registry.register(Watch).unwrap();
    let model = Scripted::new([calls(&[("dropped", "watch", json!({}))])]);
    let agent = Agent::new(model, registry);
    let given_up = tokio::time::timeout(Duration::from_millis(200), agent.run("Watch")).await;
    assert!(given_up.is_err(), "the run was still going");
    assert!(told_to_stop("dropped").await);
}

/// The result text and the warnings and errors of one call sent with
/// `null` for both optional parameters, by a model that says whether it
/// was sent strict definitions, through a registry in `mode`.
async fn nulls_for_optional_parameters(
    strict_tools: bool,
    registry: ToolRegistry,
) -> (String, Vec<String>, Vec<String>) {
    let mut registry = registry;
    registry.register(Repeat).unwrap();
    let input = json!({"text": "ab", "times": null, "separator": null});
    let model = Scripted::new([calls(&[("c1", "repeat", input)]), text("Done.", ModelStop::EndTurn)])
        .strict_tools(strict_tools);
    let finished = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = finished.clone();
    let outcome = Agent::new(model, registry)
        .on_event(move |event| {
            if let AgentEvent::ToolCallFinished { warnings, errors, .. } = event {
                seen.lock().unwrap().push((warnings.clone(), errors.clone()));
            }
        })
        .run("Repeat ab")
        .await;
    assert_transcript_valid(&outcome.transcript);
    let result = outcome.transcript[2].tool_results().next().unwrap().clone();
    let text = result.to_text();
    let (warnings, errors) = finished.lock().unwrap().pop().unwrap();
    (text, warnings, errors)
}

#[tokio::test]
async fn a_model_sent_strict_definitions_has_its_nulls_read_as_not_given() {
    // Lenient registry: the default, with no warning.
    let (text, warnings, errors) = nulls_for_optional_parameters(true, ToolRegistry::new()).await;
    assert_eq!((text.as_str(), warnings, errors), ("abab", vec![], vec![]));
    // Strict registry: not refused either.
    let (text, warnings, errors) = nulls_for_optional_parameters(true, ToolRegistry::new().strict()).await;
    assert_eq!((text.as_str(), warnings, errors), ("abab", vec![], vec![]));

    // A model sent ordinary definitions: the `null` is the binder's to
    // replace (lenient) or refuse (strict).
    let (text, warnings, errors) = nulls_for_optional_parameters(false, ToolRegistry::new()).await;
    assert_eq!(
        (text.as_str(), warnings, errors),
        ("abab", vec!["null_replaced_by_default:times".to_owned()], vec![])
    );
    let (_, _, errors) = nulls_for_optional_parameters(false, ToolRegistry::new().strict()).await;
    assert_eq!(errors, ["type_mismatch:times"]);
    // The registry's own setting still holds for such a model.
    let registry = ToolRegistry::new().strict().with_strict_definitions(true);
    let (text, _, errors) = nulls_for_optional_parameters(false, registry).await;
    assert_eq!((text.as_str(), errors), ("abab", vec![]));
}

/// Resuming checks what it is given before it runs or records anything:
/// results are matched by call id, or, without one, to the pending call of
/// their tool; a result that answers no pending call, or a transcript that
/// does not end with the deferred calls, is an error, never a call that
/// ran told to the model as not run. `run_pending` runs a pending call as
/// the run would have: a strict model's `null` means "not given".
#[tokio::test]
async fn resuming_matches_every_result_to_a_pending_call_or_refuses() {
    use tool_runtime::agent::{Approval, ResumeError};
    use tool_runtime::{ToolCall, ToolOutput, ToolResult};

    let deferred_run = || {
        let mut registry = registry();
        registry.register(Repeat).unwrap();
        let model = Scripted::new([
            calls(&[
                ("r1", "repeat", json!({"text": "ab", "times": null})),
                ("g1", "greet", json!({"name": "Ada"})),
            ]),
            text("Done.", ModelStop::EndTurn),
        ])
        .strict_tools(true);
        Agent::new(model, registry).approver(|_: &ToolCall| Approval::Defer)
    };
    let agent = deferred_run();
    let outcome = agent.run("Go").await;
    assert_eq!(outcome.stop, StopReason::Deferred);
    let deferred = outcome.deferred.clone().unwrap();

    // A result for a call that is not pending, or twice for one call.
    for results in [
        vec![ToolResult::new("greet", Some("g9".into()), ToolOutput::text("Hi"))],
        vec![ToolResult::new("add", None, ToolOutput::text("3"))],
        vec![
            ToolResult::new("greet", Some("g1".into()), ToolOutput::text("Hi")),
            ToolResult::new("greet", None, ToolOutput::text("Hi again")),
        ],
    ] {
        let error = agent
            .resume(
                outcome.transcript.clone(),
                deferred.clone(),
                results,
                &Cancellation::new(),
            )
            .await
            .unwrap_err();
        assert!(matches!(error, ResumeError::UnmatchedResult { .. }), "{error}");
    }
    // A transcript continued past the deferred calls answers nothing.
    let mut continued = outcome.transcript.clone();
    continued.push(Message::user("And then?"));
    assert_eq!(deferred.check(&continued, &[]), Err(ResumeError::TranscriptMismatch));
    assert_eq!(deferred.check(&outcome.transcript, &[]), Ok(()));
    let error = agent
        .resume(continued, deferred.clone(), [], &Cancellation::new())
        .await
        .unwrap_err();
    assert_eq!(error, ResumeError::TranscriptMismatch);

    // Run as the run would have: no refusal, no warning for the `null`.
    let pending: Vec<ToolUse> = deferred.pending().cloned().collect();
    let repeated = agent.run_pending(&pending[0]).await;
    assert!(!repeated.is_error, "{}", repeated.text());
    assert_eq!(repeated.text(), "abab");
    assert!(repeated.warnings.is_empty(), "{:?}", repeated.warning_codes());
    // Without an id, a result answers the pending call of its tool.
    let greeted = ToolResult::new("greet", None, ToolOutput::text("Hello, Ada!"));
    let resumed = agent
        .resume(outcome.transcript, deferred, [greeted, repeated], &Cancellation::new())
        .await
        .unwrap();
    assert_eq!(resumed.stop, StopReason::EndTurn);
    assert_transcript_valid(&resumed.transcript);
    let answers: Vec<(String, String)> = resumed.transcript[2]
        .tool_results()
        .map(|r| (r.tool_use_id.clone(), r.to_text()))
        .collect();
    assert_eq!(
        answers,
        [
            ("r1".to_owned(), "abab".to_owned()),
            ("g1".to_owned(), "Hello, Ada!".to_owned())
        ]
    );
}

/// A model whose final message lacks a call its stream started (no client
/// here sends one; a custom model may): the call that ran stays in the
/// transcript with its result, and the turn is a malformed response.
#[tokio::test(start_paused = true)]
async fn a_started_call_missing_from_the_final_message_is_kept_and_the_turn_malformed() {
    for answered in [vec![ToolUse::new("t2", "add", json!({"a": 2, "b": 2}))], vec![]] {
        let model = Streams {
            streamed: vec![
                ToolUse::new("t1", "add", json!({"a": 1, "b": 1})),
                ToolUse::new("t2", "add", json!({"a": 2, "b": 2})),
            ],
            answered,
            log: Arc::default(),
        };
        let outcome = Agent::new(model, registry()).run("Add").await;
        assert_eq!(outcome.stop, StopReason::ModelError);
        let error = outcome.error.unwrap();
        assert_eq!(error.kind(), ModelErrorKind::MalformedResponse);
        assert!(error.to_string().contains("t1"), "{error}");
        assert_transcript_valid(&outcome.transcript);
        // Every started call is answered; the first had run (the second
        // is stopped, perhaps before it ran).
        let answered: Vec<(String, String)> = outcome.transcript[2]
            .tool_results()
            .map(|r| (r.tool_use_id.clone(), r.to_text()))
            .collect();
        assert_eq!(answered.len(), 2, "{answered:?}");
        assert_eq!(answered[0], ("t1".to_owned(), "2".to_owned()));
        assert_eq!(answered[1].0, "t2");
    }
}

/// A run cancelled while one call of a turn runs and another waits for a
/// person: the waiting call is answered as not run, and the run ends
/// cancelled, not deferred, its transcript whole.
#[tokio::test(start_paused = true)]
async fn a_run_cancelled_with_a_deferred_call_ends_cancelled_with_every_call_answered() {
    use tool_runtime::ToolCall;
    use tool_runtime::agent::Approval;

    let model = Scripted::new([calls(&[
        ("a1", "add", json!({"a": 1, "b": 2})),
        ("w1", "wait_forever", json!({})),
    ])]);
    let agent = Agent::new(model, registry()).approver(|call: &ToolCall| match call.name.as_str() {
        "add" => Approval::Defer,
        _ => Approval::Run,
    });
    let cancellation = Cancellation::new();
    let cancel = cancellation.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        cancel.cancel();
    });
    let outcome = agent
        .run_cancellable(vec![Message::user("Add and wait")], &cancellation)
        .await;
    assert_eq!(outcome.stop, StopReason::Cancelled);
    assert!(outcome.deferred.is_none());
    assert_transcript_valid(&outcome.transcript);
    let answered: Vec<(String, String)> = outcome.transcript[2]
        .tool_results()
        .map(|r| (r.tool_use_id.clone(), r.to_text()))
        .collect();
    assert_eq!(answered.len(), 2, "{answered:?}");
    assert_eq!(answered[0].0, "a1");
    assert!(answered[0].1.contains("cancelled before it ran"), "{answered:?}");
    assert_eq!(answered[1].0, "w1");
    assert!(answered[1].1.contains("cancelled before it finished"), "{answered:?}");
}

/// Arguments an approver changed, refused by the binder while every slot
/// of the concurrency limit is taken, are answered with the note saying
/// they were changed: the model reads about arguments it never sent.
#[tokio::test(start_paused = true)]
async fn refused_changed_arguments_say_they_were_changed_even_when_no_slot_is_free() {
    use tool_runtime::ToolCall;
    use tool_runtime::agent::Approval;

    let model = Scripted::new([
        calls(&[
            ("w1", "wait_forever", json!({})),
            ("a1", "add", json!({"a": 1, "b": 2})),
        ]),
        text("Done", ModelStop::EndTurn),
    ]);
    let registry = registry()
        .with_concurrency(1)
        .with_timeout(Some(Duration::from_secs(1)));
    let agent = Agent::new(model, registry).approver(|call: &ToolCall| match call.name.as_str() {
        "add" => Approval::Modify(json!({"a": "one", "b": 2})),
        _ => Approval::Run,
    });
    let outcome = agent.run("Wait and add").await;
    assert_eq!(outcome.stop, StopReason::EndTurn);
    assert_transcript_valid(&outcome.transcript);
    let added = outcome.transcript[2]
        .tool_results()
        .find(|r| r.tool_use_id == "a1")
        .expect("the add call's result");
    let text = added.to_text();
    assert!(added.is_error, "{text}");
    assert!(text.starts_with("The arguments of this call were changed"), "{text}");
    assert!(text.contains("\"a\""), "the binder's problem follows: {text}");
}

/// A result the caller supplies to a deferred call is held to the
/// registry's output limit, as the registry's own results are.
#[tokio::test]
async fn a_supplied_result_is_cut_to_the_output_limit() {
    use tool_runtime::ToolCall;
    use tool_runtime::agent::Approval;

    let model = Scripted::new([
        calls(&[("g1", "greet", json!({"name": "Ada"}))]),
        text("Done", ModelStop::EndTurn),
    ]);
    let agent = Agent::new(model, registry().with_max_output_bytes(Some(100))).approver(|_: &ToolCall| Approval::Defer);
    let outcome = agent.run("Greet").await;
    assert_eq!(outcome.stop, StopReason::Deferred);
    let supplied = tool_runtime::ToolResult::new(
        "greet",
        Some("g1".into()),
        tool_runtime::ToolOutput::text("x".repeat(10_000)),
    );
    let resumed = agent
        .resume(
            outcome.transcript,
            outcome.deferred.unwrap(),
            [supplied],
            &Cancellation::new(),
        )
        .await
        .unwrap();
    assert_eq!(resumed.stop, StopReason::EndTurn);
    let text = resumed.transcript[2].tool_results().next().unwrap().to_text();
    assert!(text.len() < 300, "{} bytes", text.len());
    assert!(text.starts_with(&"x".repeat(50)), "{text}");
}

/// A turn of more calls than run per turn: the first ones run (those the
/// stream started counting first), each of the rest is answered as not
/// run, and every call keeps its one result, in order.
#[tokio::test(start_paused = true)]
async fn calls_past_the_limit_per_turn_are_answered_without_running() {
    let add = |id: &str, a: i64| ToolUse::new(id, "add", json!({"a": a, "b": 1}));
    let answered = |outcome: &tool_runtime::agent::Outcome| -> Vec<(String, String)> {
        outcome.transcript[2]
            .tool_results()
            .map(|r| (r.tool_use_id.clone(), r.to_text()))
            .collect()
    };
    let not_run = |text: &str| text.contains("was not run: the turn holds") && text.contains("at most 2 run per turn");

    // Whole turn. The four calls turned away are no failures of `add`:
    // three in a row would stop the run.
    let turn = calls(&[
        ("t1", "add", json!({"a": 1, "b": 1})),
        ("t2", "add", json!({"a": 2, "b": 1})),
        ("t3", "add", json!({"a": 3, "b": 1})),
        ("t4", "add", json!({"a": 4, "b": 1})),
        ("t5", "add", json!({"a": 5, "b": 1})),
        ("t6", "add", json!({"a": 6, "b": 1})),
    ]);
    let outcome = Agent::new(Scripted::new([turn, text("Done", ModelStop::EndTurn)]), registry())
        .max_calls_per_turn(2)
        .run("Add")
        .await;
    assert_eq!(outcome.stop, StopReason::EndTurn);
    assert_transcript_valid(&outcome.transcript);
    let results = answered(&outcome);
    assert_eq!(results[..2], [("t1".into(), "2".into()), ("t2".into(), "3".into())]);
    assert!(results[2..].iter().all(|(_, text)| not_run(text)), "{results:?}");

    // Streamed: the stream starts at most the limit; the message's order
    // then gives the rest no room.
    let calls = vec![add("s1", 1), add("s2", 2), add("s3", 3), add("s4", 4)];
    let model = Streams {
        streamed: vec![calls[3].clone(), calls[1].clone(), calls[0].clone()],
        answered: calls,
        log: Arc::default(),
    };
    let outcome = Agent::new(model, registry()).max_calls_per_turn(2).run("Add").await;
    assert_transcript_valid(&outcome.transcript);
    let results = answered(&outcome);
    let ids: Vec<&str> = results.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids, ["s1", "s2", "s3", "s4"]);
    assert!(not_run(&results[0].1) && not_run(&results[2].1), "{results:?}");
    assert_eq!(results[1].1, "3");
    assert_eq!(results[3].1, "5");
}

/// A deferred outcome's transcript continued with `run_cancellable`, not
/// resumed: its calls are answered as not run before the model sees them,
/// and what the model gets keeps the transcript rule. One whose results
/// answer other calls is not sent at all.
#[tokio::test]
async fn a_transcript_passed_back_with_unanswered_calls_is_answered_before_it_is_sent() {
    use tool_runtime::ToolCall;
    use tool_runtime::agent::Approval;
    use tool_runtime::model::{Role, ToolResultBlock};

    let model = Arc::new(Scripted::new([
        calls(&[
            ("g1", "greet", json!({"name": "Ada"})),
            ("g2", "greet", json!({"name": "Bo"})),
        ]),
        text("Fine.", ModelStop::EndTurn),
    ]));
    let agent = Agent::new(model.clone(), registry()).approver(|_: &ToolCall| Approval::Defer);
    let outcome = agent.run("Greet").await;
    assert_eq!(outcome.stop, StopReason::Deferred);
    // Continued as a new turn instead of resumed.
    let mut transcript = outcome.transcript;
    transcript.push(Message::user("Never mind."));
    let continued = Agent::new(model.clone(), registry())
        .run_cancellable(transcript, &Cancellation::new())
        .await;
    assert_eq!(continued.stop, StopReason::EndTurn);
    assert_eq!(continued.text, "Fine.");
    assert_transcript_valid(&continued.transcript);
    let sent = &model.requests()[1];
    assert_transcript_valid(sent);
    let answers: Vec<(String, String)> = sent[2]
        .tool_results()
        .map(|r| (r.tool_use_id.clone(), r.to_text()))
        .collect();
    assert_eq!(
        answers,
        [
            ("g1".to_owned(), NO_RESULT.to_owned()),
            ("g2".to_owned(), NO_RESULT.to_owned())
        ]
    );
    assert_eq!(sent[2].text(), "Never mind.", "the user's words follow the results");

    // Results for other calls than those made: nothing is sent.
    let model = Arc::new(Scripted::new([text("Never sent", ModelStop::EndTurn)]));
    let wrong = vec![
        Message::user("Greet"),
        Message::new(
            Role::Assistant,
            vec![Block::ToolUse(ToolUse::new("g1", "greet", json!({"name": "Ada"})))],
        ),
        Message::new(
            Role::User,
            vec![Block::ToolResult(ToolResultBlock::text("other", "Hi", false))],
        ),
    ];
    let refused = Agent::new(model.clone(), registry())
        .run_cancellable(wrong, &Cancellation::new())
        .await;
    assert_eq!(refused.stop, StopReason::ModelError);
    assert_eq!(refused.error.map(|e| e.kind()), Some(ModelErrorKind::InvalidRequest));
    assert!(model.requests().is_empty(), "nothing was sent");
    assert_eq!(
        refused.transcript[2].tool_results().count(),
        1,
        "the transcript is kept as given"
    );

    // Results after the user's text and out of order, and one call not
    // answered: put first, in order, the missing one saying so.
    let model = Arc::new(Scripted::new([text("Fine.", ModelStop::EndTurn)]));
    let disordered = vec![
        Message::user("Greet"),
        Message::new(
            Role::Assistant,
            vec![
                Block::ToolUse(ToolUse::new("g1", "greet", json!({"name": "Ada"}))),
                Block::ToolUse(ToolUse::new("g2", "greet", json!({"name": "Bo"}))),
                Block::ToolUse(ToolUse::new("g3", "greet", json!({"name": "Cy"}))),
            ],
        ),
        Message::new(
            Role::User,
            vec![
                Block::Text { text: "Here:".into() },
                Block::ToolResult(ToolResultBlock::text("g3", "Hello, Cy!", false)),
                Block::ToolResult(ToolResultBlock::text("g1", "Hello, Ada!", false)),
            ],
        ),
    ];
    let outcome = Agent::new(model.clone(), registry())
        .run_cancellable(disordered, &Cancellation::new())
        .await;
    assert_eq!(outcome.stop, StopReason::EndTurn);
    let sent = &model.requests()[0];
    assert_transcript_valid(sent);
    let answers: Vec<(String, String)> = sent[2]
        .tool_results()
        .map(|r| (r.tool_use_id.clone(), r.to_text()))
        .collect();
    assert_eq!(
        answers,
        [
            ("g1".to_owned(), "Hello, Ada!".to_owned()),
            ("g2".to_owned(), NO_RESULT.to_owned()),
            ("g3".to_owned(), "Hello, Cy!".to_owned())
        ]
    );
    assert_eq!(sent[2].text(), "Here:");

    // A call answered twice: nothing is sent.
    let model = Arc::new(Scripted::new([text("Never sent", ModelStop::EndTurn)]));
    let twice = vec![
        Message::user("Greet"),
        Message::new(
            Role::Assistant,
            vec![Block::ToolUse(ToolUse::new("g1", "greet", json!({"name": "Ada"})))],
        ),
        Message::new(
            Role::User,
            vec![
                Block::ToolResult(ToolResultBlock::text("g1", "Hello, Ada!", false)),
                Block::ToolResult(ToolResultBlock::text("g1", "Hello again!", false)),
            ],
        ),
    ];
    let refused = Agent::new(model.clone(), registry())
        .run_cancellable(twice, &Cancellation::new())
        .await;
    assert_eq!(refused.error.map(|e| e.kind()), Some(ModelErrorKind::InvalidRequest));
    assert!(model.requests().is_empty(), "nothing was sent");
}

/// What a call of a transcript passed back without its result is answered.
const NO_RESULT: &str = "The call of `greet` has no result here: it may not have run, or its result was not kept.";
