//! Dispatch: concurrency with order kept, sequential tools, time limits,
//! panics and cancellation. Time is Tokio's paused clock, so these tests
//! measure virtual time and are exact on a busy machine.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::json;
use tokio::time::Instant;
use tool_runtime::{Cancellation, Outcome, State, ToolCall, ToolContext, ToolRegistry, tool};

/// Tracks how many calls run at once, and the most that ever did.
#[derive(Default)]
struct InFlight {
    now: AtomicUsize,
    peak: AtomicUsize,
}

impl InFlight {
    async fn during<T>(&self, work: impl std::future::Future<Output = T>) -> T {
        let now = self.now.fetch_add(1, Ordering::SeqCst) + 1;
        self.peak.fetch_max(now, Ordering::SeqCst);
        let out = work.await;
        self.now.fetch_sub(1, Ordering::SeqCst);
        out
    }

    fn peak(&self) -> usize {
        self.peak.load(Ordering::SeqCst)
    }
}

/// Wait, then answer with the label.
#[tool]
async fn wait(
    #[param(description = "What to answer")] label: String,
    #[param(description = "How long to wait, in milliseconds")] millis: u64,
    flight: State<InFlight>,
) -> String {
    flight.during(tokio::time::sleep(Duration::from_millis(millis))).await;
    label
}

/// Wait alone, never beside another call.
#[tool(sequential)]
async fn wait_alone(
    #[param(description = "What to answer")] label: String,
    #[param(description = "How long to wait, in milliseconds")] millis: u64,
    flight: State<InFlight>,
) -> String {
    wait(label, millis, flight).await
}

/// Always panic.
#[tool]
async fn explode(#[param(description = "The panic message")] message: String) -> String {
    panic!("{message}")
}

/// Always panic, at a step.
#[tool]
async fn explode_at(#[param(description = "The step")] step: u32) -> String {
    panic!("at step {step}")
}

/// Say how many calls are running, without waiting for anything.
#[tool]
async fn count_running(flight: State<InFlight>) -> String {
    flight.now.load(Ordering::SeqCst).to_string()
}

/// Start background work that stops when the call is cancelled, then hang.
#[tool]
async fn hang(ctx: ToolContext, stopped: State<Stopped>) -> String {
    let stopped = stopped.arc().clone();
    tokio::spawn(async move {
        ctx.cancellation().cancelled().await;
        stopped.0.fetch_add(1, Ordering::SeqCst);
    });
    std::future::pending::<()>().await;
    unreachable!()
}

/// Counts background work that saw its call's cancellation.
#[derive(Default)]
struct Stopped(AtomicUsize);

fn registry() -> ToolRegistry {
    let mut registry = ToolRegistry::new()
        .with_concurrency(16)
        .with_timeout(Some(Duration::from_secs(5)))
        .with_state(InFlight::default())
        .with_state(Stopped::default());
    registry
        .register(Wait)
        .unwrap()
        .register(WaitAlone)
        .unwrap()
        .register(Explode)
        .unwrap()
        .register(Hang)
        .unwrap()
        .register(CountRunning)
        .unwrap();
    registry
}

fn wait_call(tool: &str, i: usize, millis: u64) -> ToolCall {
    ToolCall::new(tool, json!({"label": format!("r{i}"), "millis": millis})).with_id(format!("id{i}"))
}

fn peak(registry: &ToolRegistry) -> usize {
    registry
        .state::<InFlight>()
        .expect("the registry holds InFlight")
        .peak()
}

fn stopped(registry: &ToolRegistry) -> usize {
    registry
        .state::<Stopped>()
        .expect("the registry holds Stopped")
        .0
        .load(Ordering::SeqCst)
}

#[tokio::test(start_paused = true)]
async fn ten_calls_of_one_message_run_concurrently_and_keep_their_order() {
    let registry = registry();
    // Later calls are shorter, so they finish first.
    let calls: Vec<_> = (0..10).map(|i| wait_call("wait", i, 200 - 10 * i as u64)).collect();
    let start = Instant::now();
    let results = registry.call_all(calls).await;
    let elapsed = start.elapsed();
    assert!(elapsed < Duration::from_millis(250), "took {elapsed:?} of virtual time");
    assert_eq!(peak(&registry), 10, "all ten ran at once");
    let labels: Vec<_> = results.iter().map(|r| r.text()).collect();
    assert_eq!(labels, (0..10).map(|i| format!("r{i}")).collect::<Vec<_>>());
    let ids: Vec<_> = results.iter().map(|r| r.call_id.clone().unwrap()).collect();
    assert_eq!(ids, (0..10).map(|i| format!("id{i}")).collect::<Vec<_>>());
}

#[tokio::test(start_paused = true)]
async fn the_concurrency_limit_is_respected() {
    let registry = registry().with_concurrency(3);
    let calls: Vec<_> = (0..9).map(|i| wait_call("wait", i, 100)).collect();
    let start = Instant::now();
    let results = registry.call_all(calls).await;
    assert!(results.iter().all(|r| !r.is_error));
    assert_eq!(peak(&registry), 3);
    assert!(start.elapsed() >= Duration::from_millis(300));
}

#[tokio::test(start_paused = true)]
async fn a_sequential_tool_never_overlaps_another_call() {
    let registry = registry();
    let calls = vec![
        wait_call("wait", 0, 100),
        wait_call("wait_alone", 1, 100),
        wait_call("wait", 2, 100),
        wait_call("wait_alone", 3, 100),
    ];
    let start = Instant::now();
    let results = registry.call_all(calls).await;
    assert_eq!(
        results.iter().map(|r| r.text()).collect::<Vec<_>>(),
        ["r0", "r1", "r2", "r3"]
    );
    assert_eq!(peak(&registry), 1, "no two calls overlapped");
    assert!(start.elapsed() >= Duration::from_millis(400));
}

/// Work first, then wait: the work before the first wait counts.
#[tool]
async fn work_then_wait(
    #[param(description = "Milliseconds of work")] work: u64,
    #[param(description = "Milliseconds of waiting")] wait: u64,
) -> String {
    std::thread::sleep(Duration::from_millis(work));
    tokio::time::sleep(Duration::from_millis(wait)).await;
    "done".to_owned()
}

/// The time limit counts from the moment the call is made, the tool's own
/// work before its first wait included (real time: the work blocks).
#[tokio::test]
async fn the_time_limit_counts_the_work_before_the_first_wait() {
    let mut registry = ToolRegistry::new().with_timeout(Some(Duration::from_secs(1)));
    registry.register(WorkThenWait).unwrap();
    // 500 ms of work and 800 ms of waiting: over the limit in all, though
    // the wait alone is not.
    let result = registry.call("work_then_wait", json!({"work": 500, "wait": 800})).await;
    assert_eq!(result.outcome(), Outcome::TimedOut, "{}", result.text());
    let result = registry.call("work_then_wait", json!({"work": 0, "wait": 10})).await;
    assert_eq!(result.text(), "done");
}

/// A tool whose body never waits finishes while it starts, but still not
/// beside a sequential tool: it waits for the gate like any other call.
#[tokio::test(start_paused = true)]
async fn a_tool_that_never_waits_still_waits_for_a_sequential_one() {
    let registry = registry();
    let calls = vec![
        wait_call("wait_alone", 0, 100),
        ToolCall::new("count_running", "{}"),
        wait_call("wait", 2, 100),
        ToolCall::new("count_running", "{}"),
    ];
    let results = registry.call_all(calls).await;
    assert_eq!(results[1].text(), "0", "it ran beside the sequential call");
    assert_eq!(results[3].text(), "1", "it ran beside the ordinary call");
    // Alone in a registry with no sequential tool, it runs at once.
    let mut alone = ToolRegistry::new().with_state(InFlight::default());
    alone.register(CountRunning).unwrap();
    assert_eq!(alone.call("count_running", "{}").await.text(), "0");
}

#[tokio::test(start_paused = true)]
async fn a_slow_tool_times_out_and_the_registry_keeps_serving() {
    let registry = registry().with_timeout(Some(Duration::from_secs(1)));
    let result = registry.call("wait", json!({"label": "late", "millis": 60_000})).await;
    assert!(result.is_error);
    assert_eq!(result.outcome(), Outcome::TimedOut);
    assert!(
        result.text().contains("did not finish within 1 seconds"),
        "{}",
        result.text()
    );
    let next = registry.call("wait", json!({"label": "fine", "millis": 10})).await;
    assert_eq!(next.text(), "fine");
}

#[tokio::test(start_paused = true)]
async fn a_timed_out_tool_sees_its_cancellation() {
    let registry = registry().with_timeout(Some(Duration::from_millis(100)));
    let result = registry.call("hang", json!({})).await;
    assert_eq!(result.outcome(), Outcome::TimedOut);
    tokio::time::sleep(Duration::from_millis(1)).await;
    assert_eq!(stopped(&registry), 1, "the tool's background work was told to stop");
}

/// A caller that gives up on a call by dropping it (its own time-out, a
/// `select!`) stops the tool as the registry's time limit would.
#[tokio::test(start_paused = true)]
async fn a_dropped_call_raises_the_tool_s_cancellation() {
    let registry = registry().with_timeout(None);
    let call = registry.call("hang", json!({}));
    let gave_up = tokio::time::timeout(Duration::from_millis(100), call).await;
    assert!(gave_up.is_err(), "the call hangs");
    tokio::time::sleep(Duration::from_millis(1)).await;
    assert_eq!(stopped(&registry), 1, "the tool's background work was told to stop");
}

/// A call that fails once its arguments were bound (timed out, panicked)
/// still carries their warnings: the tool ran with the changed values.
#[tokio::test(start_paused = true)]
async fn a_call_that_fails_after_binding_keeps_its_warnings() {
    let registry = registry().with_timeout(Some(Duration::from_secs(1)));
    let timed_out = registry.call("wait", json!({"label": "late", "millis": "60000"})).await;
    assert_eq!(timed_out.outcome(), Outcome::TimedOut, "{}", timed_out.text());
    assert_eq!(
        timed_out.warning_codes(),
        ["string_literal_converted_to_integer:millis"]
    );
    let panicked = registry.call("explode", json!({"message": 7})).await;
    assert_eq!(panicked.outcome(), Outcome::Panicked, "{}", panicked.text());
    assert_eq!(panicked.warning_codes().len(), 1, "{:?}", panicked.warning_codes());
    assert!(
        panicked.warning_codes()[0].ends_with(":message"),
        "{:?}",
        panicked.warning_codes()
    );
}

/// A body that never waits runs while its call starts, where the registry
/// lets it (no sequential tool); its panic keeps the warnings of the
/// arguments it was given too, on either binding path.
#[tokio::test]
async fn a_body_that_panics_while_its_call_starts_keeps_its_warnings() {
    for fast_path in [true, false] {
        let mut registry = ToolRegistry::new().with_fast_path(fast_path);
        registry.register(ExplodeAt).unwrap();
        let panicked = registry.call("explode_at", json!({"step": "7"})).await;
        assert_eq!(panicked.outcome(), Outcome::Panicked, "{}", panicked.text());
        assert_eq!(
            panicked.warning_codes(),
            ["string_literal_converted_to_integer:step"],
            "fast path: {fast_path}"
        );
    }
}

#[tokio::test]
async fn a_panicking_tool_is_an_error_result() {
    let registry = registry();
    let results = registry
        .call_all(vec![
            ToolCall::new("explode", json!({"message": "boom"})).with_id("a"),
            wait_call("wait", 1, 1),
        ])
        .await;
    assert!(results[0].is_error);
    assert_eq!(results[0].outcome(), Outcome::Panicked);
    assert!(results[0].text().contains("boom"), "{}", results[0].text());
    assert_eq!(results[1].text(), "r1", "the other call of the message still ran");
    let again = registry.call("wait", json!({"label": "still here", "millis": 1})).await;
    assert_eq!(again.text(), "still here");
}

#[tokio::test(start_paused = true)]
async fn a_cancelled_call_is_an_error_result() {
    let registry = registry();
    let cancellation = Cancellation::new();
    let call = registry.call_cancellable(wait_call("wait", 0, 10_000), &cancellation);
    let cancel = async {
        tokio::time::sleep(Duration::from_millis(50)).await;
        cancellation.cancel();
    };
    let (result, ()) = tokio::join!(call, cancel);
    assert!(result.is_error);
    assert_eq!(result.outcome(), Outcome::Cancelled);
    assert!(result.text().contains("cancelled"), "{}", result.text());

    let cancellation = Cancellation::new();
    let call = registry.call_cancellable(ToolCall::new("hang", json!({})), &cancellation);
    let cancel = async {
        tokio::time::sleep(Duration::from_millis(50)).await;
        cancellation.cancel();
    };
    let (result, ()) = tokio::join!(call, cancel);
    assert_eq!(result.outcome(), Outcome::Cancelled);
    tokio::time::sleep(Duration::from_millis(1)).await;
    assert_eq!(stopped(&registry), 1);
}

#[tokio::test(start_paused = true)]
async fn a_time_out_never_raises_the_caller_s_signal() {
    let registry = registry().with_timeout(Some(Duration::from_millis(100)));
    let shared = Cancellation::new();
    let slow = registry.call_cancellable(ToolCall::new("hang", json!({})), &shared);
    let quick = registry.call_cancellable(wait_call("wait", 0, 50), &shared);
    let (slow, quick) = tokio::join!(slow, quick);
    assert_eq!(slow.outcome(), Outcome::TimedOut);
    assert_eq!(quick.outcome(), Outcome::Success, "{}", quick.text());
    assert!(!shared.is_cancelled(), "the caller's signal is the caller's to raise");
    tokio::time::sleep(Duration::from_millis(1)).await;
    assert_eq!(stopped(&registry), 1, "the timed-out call's own signal was raised");
}

/// Block the thread, as a plain `fn` doing file or network I/O would.
#[tool]
fn block(#[param(description = "How long to block, in milliseconds")] millis: u64) -> String {
    std::thread::sleep(Duration::from_millis(millis));
    "done".to_owned()
}

#[tokio::test]
async fn a_blocking_plain_fn_is_timed_out_and_does_not_stall_the_executor() {
    let mut registry = ToolRegistry::new().with_timeout(Some(Duration::from_millis(50)));
    registry.register(Block).unwrap();
    let result = registry.call("block", json!({"millis": 400})).await;
    assert_eq!(result.outcome(), Outcome::TimedOut, "{}", result.text());
    let quick = registry.call("block", json!({"millis": 0})).await;
    assert_eq!(quick.text(), "done");
}

#[tokio::test(start_paused = true)]
async fn the_time_limit_counts_the_wait_for_a_sequential_tool() {
    let registry = registry().with_timeout(Some(Duration::from_secs(60)));
    let start = Instant::now();
    let slow = |i| registry.call_one(wait_call("wait_alone", i, 100_000));
    let quick = async {
        let result = registry.call_one(wait_call("wait", 3, 10)).await;
        (result, start.elapsed())
    };
    let (a, b, c, (quick, quick_took)) = tokio::join!(slow(0), slow(1), slow(2), quick);
    assert_eq!(a.outcome(), Outcome::TimedOut);
    for waited in [&b, &c] {
        assert_eq!(waited.outcome(), Outcome::TimedOut);
        assert!(waited.text().contains("was not run"), "{}", waited.text());
    }
    // The quick call answers within its own limit, not after 180 s.
    assert!(quick_took <= Duration::from_secs(60), "{quick_took:?}");
    assert_eq!(quick.outcome(), Outcome::TimedOut, "{}", quick.text());
    assert!(start.elapsed() <= Duration::from_secs(60));
}

#[tokio::test(start_paused = true)]
async fn a_call_that_gets_the_sequential_lock_only_as_its_limit_ends_is_not_run() {
    let registry = registry().with_timeout(Some(Duration::from_secs(1)));
    // The sequential call holds the lock until 1 s, the very end of the
    // other call's limit: that call never starts.
    let (alone, behind) = tokio::join!(
        biased;
        registry.call_one(wait_call("wait_alone", 0, 1_000)),
        registry.call_one(wait_call("wait", 1, 0)),
    );
    assert_eq!(alone.text(), "r0");
    assert_eq!(behind.outcome(), Outcome::TimedOut);
    assert!(behind.text().contains("was not run"), "{}", behind.text());
}

/// Panics when dropped.
struct PanicOnDrop;

impl Drop for PanicOnDrop {
    fn drop(&mut self) {
        panic!("dropped");
    }
}

/// Hold a guard that panics when dropped, and hang.
#[tool]
async fn hang_messily() -> String {
    let _guard = PanicOnDrop;
    std::future::pending::<()>().await;
    unreachable!()
}

#[tokio::test(start_paused = true)]
async fn a_tool_that_panics_when_stopped_never_reaches_the_caller() {
    let mut registry = registry().with_timeout(Some(Duration::from_millis(100)));
    registry.register(HangMessily).unwrap();
    let timed_out = registry.call("hang_messily", json!({})).await;
    assert_eq!(timed_out.outcome(), Outcome::TimedOut, "{}", timed_out.text());
    let cancellation = Cancellation::new();
    let cancel = async {
        tokio::time::sleep(Duration::from_millis(50)).await;
        cancellation.cancel();
    };
    let (cancelled, ()) = tokio::join!(
        registry.call_cancellable(ToolCall::new("hang_messily", json!({})), &cancellation),
        cancel
    );
    assert_eq!(cancelled.outcome(), Outcome::Cancelled, "{}", cancelled.text());
    let results = registry
        .call_all(vec![ToolCall::new("hang_messily", json!({})), wait_call("wait", 1, 1)])
        .await;
    assert_eq!(results[0].outcome(), Outcome::TimedOut);
    assert_eq!(results[1].text(), "r1", "the other call's result is kept");
}

#[tokio::test(start_paused = true)]
async fn the_time_limit_counts_the_wait_for_the_concurrency_limit() {
    let registry = registry()
        .with_concurrency(1)
        .with_timeout(Some(Duration::from_secs(60)));
    let start = Instant::now();
    let results = registry
        .call_all(vec![wait_call("wait", 0, 50_000), wait_call("wait", 1, 50_000)])
        .await;
    assert_eq!(results[0].text(), "r0");
    // Made at 0 s, started at 50 s: its limit ends at 60 s, not at 110 s.
    assert_eq!(results[1].outcome(), Outcome::TimedOut);
    assert_eq!(start.elapsed(), Duration::from_secs(60));
}

#[tokio::test(start_paused = true)]
async fn a_call_cancelled_before_it_started_never_runs_its_tool() {
    let registry = registry();
    let cancellation = Cancellation::new();
    cancellation.cancel();
    let result = registry.call_cancellable(wait_call("wait", 0, 10), &cancellation).await;
    assert_eq!(result.outcome(), Outcome::Cancelled);
    assert!(result.text().contains("was not run"), "{}", result.text());
    assert_eq!(peak(&registry), 0, "the tool never ran");

    // Cancelled while it waited for a sequential tool: it never starts.
    let cancellation = Cancellation::new();
    let first = registry.call_one(wait_call("wait_alone", 1, 1000));
    let second = registry.call_cancellable(wait_call("wait_alone", 2, 10), &cancellation);
    let cancel = async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        cancellation.cancel();
    };
    let (first, second, ()) = tokio::join!(first, second, cancel);
    assert_eq!(first.text(), "r1");
    assert_eq!(second.outcome(), Outcome::Cancelled);
    assert!(second.text().contains("was not run"), "{}", second.text());
    assert_eq!(peak(&registry), 1, "only the first call ran");
}

#[tokio::test(start_paused = true)]
async fn a_slow_first_call_never_holds_up_the_calls_behind_it() {
    let registry = registry()
        .with_concurrency(2)
        .with_timeout(Some(Duration::from_millis(500)));
    let mut calls = vec![wait_call("wait", 0, 2000)];
    calls.extend((1..6).map(|i| wait_call("wait", i, 20)));
    let start = Instant::now();
    let results = registry.call_all(calls).await;
    assert_eq!(results[0].outcome(), Outcome::TimedOut, "{}", results[0].text());
    let labels: Vec<_> = results[1..].iter().map(|r| r.text()).collect();
    assert_eq!(
        labels,
        ["r1", "r2", "r3", "r4", "r5"],
        "the quick calls ran in the free slot"
    );
    assert_eq!(peak(&registry), 2, "never more than the limit at once");
    assert_eq!(start.elapsed(), Duration::from_millis(500));
}

#[tokio::test(start_paused = true)]
async fn a_call_that_finds_no_free_slot_within_its_limit_is_not_run() {
    let registry = registry()
        .with_concurrency(1)
        .with_timeout(Some(Duration::from_secs(1)));
    let results = registry
        .call_all(vec![wait_call("wait", 0, 5000), wait_call("wait", 1, 10)])
        .await;
    assert_eq!(results[0].outcome(), Outcome::TimedOut);
    assert!(results[0].text().contains("did not finish"), "{}", results[0].text());
    assert_eq!(results[1].outcome(), Outcome::TimedOut);
    assert!(results[1].text().contains("could not start"), "{}", results[1].text());
    assert!(results[1].text().contains("was not run"), "{}", results[1].text());
    assert_eq!(results[1].call_id.as_deref(), Some("id1"));
    assert_eq!(peak(&registry), 1, "the second call's tool never ran");
}

/// Finishes after a short sleep, so its time limit is armed.
#[tool]
async fn second_poll() -> String {
    tokio::time::sleep(Duration::from_millis(10)).await;
    "done".into()
}

#[tokio::test]
async fn a_time_limit_too_far_off_to_reach_is_no_limit() {
    let mut registry = ToolRegistry::new().with_timeout(Some(Duration::MAX));
    registry.register(SecondPoll).unwrap();
    let result = registry.call("second_poll", json!({})).await;
    assert!(!result.is_error, "{}", result.text());
    assert_eq!(result.text(), "done");
}

#[tokio::test(start_paused = true)]
async fn a_call_of_no_tool_is_answered_as_such_at_once_even_when_every_slot_is_taken() {
    let registry = registry()
        .with_concurrency(1)
        .with_timeout(Some(Duration::from_secs(1)));
    let name = "no\nsuch_tool".repeat(10_000);
    let calls = [
        wait_call("wait", 0, 60_000),
        ToolCall::new(name.as_str(), json!({})).with_id("id1"),
    ];
    let start = Instant::now();
    let results = registry.call_all(calls).await;
    assert_eq!(results[0].outcome(), Outcome::TimedOut);
    let unknown = &results[1];
    assert_eq!(unknown.outcome(), Outcome::UnknownTool, "{}", unknown.text());
    assert_eq!(unknown.error_codes().len(), 1, "{:?}", unknown.error_codes());
    assert!(unknown.error_codes()[0].starts_with("unknown_tool:"));
    assert_eq!(unknown.call_id.as_deref(), Some("id1"));
    // The name is quoted cut, on one line.
    let text = unknown.text();
    assert!(text.len() < 1_000 && !text.contains('\n'), "{text}");
    assert!(unknown.tool().len() < 200, "{}", unknown.tool());
    // It waited for nothing: only the timed-out call took its second.
    assert!(start.elapsed() <= Duration::from_secs(1), "{:?}", start.elapsed());
}

#[tokio::test(start_paused = true)]
async fn a_call_with_refused_arguments_is_answered_at_once_even_when_every_slot_is_taken() {
    let registry = registry()
        .with_concurrency(1)
        .with_timeout(Some(Duration::from_secs(1)));
    let calls = [
        wait_call("wait", 0, 60_000),
        ToolCall::new("wait", json!({"millis": "soon"})).with_id("id1"),
        ToolCall::new("wait", "{not json").with_id("id2"),
        ToolCall::new("wait", json!({"label": "r3", "millis": "5"})).with_id("id3"),
    ];
    let start = Instant::now();
    let results = registry.call_all(calls).await;
    assert_eq!(results[0].outcome(), Outcome::TimedOut);
    // Their problems, not a wait that ran out: neither would ever run.
    let refused = &results[1];
    assert_eq!(refused.outcome(), Outcome::InvalidArguments, "{}", refused.text());
    let codes = refused.error_codes();
    assert!(
        codes.iter().any(|c| c.starts_with("missing_required:label")),
        "{codes:?}"
    );
    assert!(
        codes
            .iter()
            .any(|c| c.starts_with("unsupported_integer_literal:millis")),
        "{codes:?}"
    );
    assert_eq!(refused.call_id.as_deref(), Some("id1"));
    assert_eq!(results[2].outcome(), Outcome::InvalidArguments, "{}", results[2].text());
    assert_eq!(results[2].call_id.as_deref(), Some("id2"));
    // Arguments the binder accepts still wait for the slot, and here find
    // none in time: the tool never runs.
    assert_eq!(results[3].outcome(), Outcome::TimedOut, "{}", results[3].text());
    assert!(results[3].text().contains("could not start"), "{}", results[3].text());
    assert_eq!(peak(&registry), 1);
    assert!(start.elapsed() <= Duration::from_secs(1), "{:?}", start.elapsed());
}

/// Whether the body of [`block_alone`] or [`block_beside`] runs, and whether
/// the test let it end.
static BODY_RUNS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
static BODY_RELEASED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

fn block_until_released() -> String {
    BODY_RUNS.store(true, Ordering::SeqCst);
    while !BODY_RELEASED.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(1));
    }
    BODY_RUNS.store(false, Ordering::SeqCst);
    "ended".to_owned()
}

/// Block alone until the test lets go.
#[tool(sequential)]
fn block_alone() -> String {
    block_until_released()
}

/// Block beside others until the test lets go.
#[tool]
fn block_beside() -> String {
    block_until_released()
}

fn beside_a_body() -> String {
    if BODY_RUNS.load(Ordering::SeqCst) {
        "beside"
    } else {
        "alone"
    }
    .to_owned()
}

/// Say whether a blocking body runs beside this call.
#[tool]
async fn peek() -> String {
    beside_a_body()
}

/// Say it, alone.
#[tool(sequential)]
async fn peek_alone() -> String {
    beside_a_body()
}

/// A plain `fn` body cannot be stopped: when its call times out it runs on,
/// and holds the gate of sequential tools until it ends, so a sequential
/// tool still runs beside no other call. Real time (a short limit), since
/// blocking bodies do not run on the paused clock; counts and texts are
/// asserted, never durations.
#[tokio::test]
async fn a_plain_fn_body_outliving_its_call_still_holds_the_sequential_gate() {
    let mut registry = ToolRegistry::new().with_timeout(Some(Duration::from_millis(50)));
    registry
        .register(BlockAlone)
        .unwrap()
        .register(BlockBeside)
        .unwrap()
        .register(Peek)
        .unwrap()
        .register(PeekAlone)
        .unwrap();
    for (blocking, other) in [("block_alone", "peek"), ("block_beside", "peek_alone")] {
        BODY_RELEASED.store(false, Ordering::SeqCst);
        let given_up = registry.call(blocking, json!({})).await;
        assert_eq!(given_up.outcome(), Outcome::TimedOut, "{}", given_up.text());
        assert!(BODY_RUNS.load(Ordering::SeqCst), "the body runs on");
        // The body still holds the gate: the other call never starts.
        let waited = registry.call(other, json!({})).await;
        assert_eq!(
            waited.outcome(),
            Outcome::TimedOut,
            "{blocking}, then {other}: {}",
            waited.text()
        );
        assert!(waited.text().contains("was not run"), "{}", waited.text());
        BODY_RELEASED.store(true, Ordering::SeqCst);
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while registry.stray_blocking_calls() > 0 && std::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        assert_eq!(registry.call(other, json!({})).await.text(), "alone");
    }
}

/// A refusal answered while every slot is taken reads as the same refusal
/// answered at once: cut to the output limit.
#[tokio::test(start_paused = true)]
async fn a_refusal_answered_while_every_slot_is_taken_is_cut_to_the_output_limit() {
    let registry = registry()
        .with_concurrency(1)
        .with_max_output_bytes(Some(120))
        .with_timeout(Some(Duration::from_secs(1)));
    let refused = || ToolCall::new("wait", json!({"millis": "soon", "other": 1})).with_id("id1");
    let alone = registry.call_one(refused()).await;
    assert!(alone.text().contains("[output cut here"), "{}", alone.text());
    let results = registry.call_all([wait_call("wait", 0, 60_000), refused()]).await;
    assert_eq!(results[1].outcome(), Outcome::InvalidArguments);
    assert_eq!(results[1].text(), alone.text());
}
