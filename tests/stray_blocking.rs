//! Plain `fn` bodies that outlive their time limit are bounded and counted
//! (SPEC section 6). Its own test binary: the count is process-wide.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::json;
use tool_runtime::{Outcome, ToolRegistry, tool};

static RELEASED: AtomicBool = AtomicBool::new(false);
static PANIC_RELEASED: AtomicBool = AtomicBool::new(false);

/// Block the thread until the test releases it.
#[tool]
fn stuck(#[param(description = "Ignored")] n: u32) -> u32 {
    while !RELEASED.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(1));
    }
    n
}

/// Block the thread until the test releases it, then panic.
#[tool]
fn stuck_then_panic(#[param(description = "Ignored")] n: u32) -> u32 {
    while !PANIC_RELEASED.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(1));
    }
    panic!("gave up on {n}")
}

/// Answer at once.
#[tool]
async fn quick(#[param(description = "Echoed")] n: u32) -> u32 {
    n
}

// Tokio's paused clock does not move while blocking tasks run, so this
// test uses a short real time limit; it asserts counts, never durations.
#[tokio::test]
async fn timed_out_plain_fn_bodies_are_bounded_and_async_tools_keep_being_served() {
    let mut registry = ToolRegistry::new().with_timeout(Some(Duration::from_millis(5)));
    registry
        .register(Stuck)
        .unwrap()
        .register(Quick)
        .unwrap()
        .register(StuckThenPanic)
        .unwrap();
    let mut outcomes = Vec::new();
    for n in 0..520 {
        outcomes.push(registry.call("stuck", json!({ "n": n })).await.outcome());
    }
    let timed_out = outcomes.iter().filter(|o| **o == Outcome::TimedOut).count();
    let refused = outcomes.iter().filter(|o| **o == Outcome::Overloaded).count();
    assert_eq!((timed_out, refused), (64, 456));
    assert_eq!(registry.stray_blocking_calls(), 64);
    let result = registry.call("stuck", json!({"n": 1})).await;
    assert!(
        result.text().contains("still running past their time limit"),
        "{}",
        result.text()
    );
    // Async tools are served whatever the count.
    assert_eq!(registry.call("quick", json!({"n": 7})).await.text(), "7");

    RELEASED.store(true, Ordering::SeqCst);
    while registry.stray_blocking_calls() > 0 {
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(registry.call("stuck", json!({"n": 3})).await.text(), "3");

    // A body that panics after its call gave up on it ends all the same.
    let result = registry.call("stuck_then_panic", json!({"n": 4})).await;
    assert_eq!(result.outcome(), Outcome::TimedOut);
    assert_eq!(registry.stray_blocking_calls(), 1);
    PANIC_RELEASED.store(true, Ordering::SeqCst);
    let waited = std::time::Instant::now();
    while registry.stray_blocking_calls() > 0 && waited.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(registry.stray_blocking_calls(), 0, "a body that panicked still counts");
}
