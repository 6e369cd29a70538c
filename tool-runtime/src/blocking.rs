//! Work on Tokio's blocking pool that may outlive the call waiting for it.
//!
//! A body on the pool cannot be stopped: when the call that waits for it is
//! given up (timed out, cancelled), the body runs on and holds its thread.
//! Such bodies are counted, across the process, as strays until they end,
//! so the registry can bound them ([`crate::ToolRegistry::stray_blocking_calls`]).
//! Two kinds run here: plain `fn` tool bodies (`__private::run_blocking`)
//! and the threads the MCP server runs each call on.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};

/// Bodies still running on the blocking pool after their call was given
/// up, across the process: every registry shares the runtime's pool.
static STRAY_BLOCKING_CALLS: AtomicUsize = AtomicUsize::new(0);

/// How many bodies run on after their call was given up.
pub(crate) fn stray_calls() -> usize {
    STRAY_BLOCKING_CALLS.load(Ordering::Acquire)
}

/// Runs `body` on the blocking pool and waits for it. Dropping the returned
/// future before the body ends counts the body as a stray until it ends.
/// The error is the pool's: the body panicked (or the runtime shut down).
pub(crate) async fn run<T: Send + 'static>(
    body: impl FnOnce() -> T + Send + 'static,
) -> Result<T, tokio::task::JoinError> {
    let state = Arc::new(AtomicU8::new(RUNNING));
    let mut watch = GiveUpWatch {
        state: Arc::clone(&state),
        armed: true,
    };
    let task = tokio::task::spawn_blocking(move || {
        let value = body();
        if state
            .compare_exchange(RUNNING, ENDED, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            // Given up while it ran: it is no stray any more.
            STRAY_BLOCKING_CALLS.fetch_sub(1, Ordering::AcqRel);
        }
        value
    });
    let finished = task.await;
    watch.armed = false;
    finished
}

const RUNNING: u8 = 0;
const ENDED: u8 = 1;
const GIVEN_UP: u8 = 2;

/// Counts the body as a stray when the future waiting for it is dropped
/// while the body still runs.
struct GiveUpWatch {
    state: Arc<AtomicU8>,
    armed: bool,
}

impl Drop for GiveUpWatch {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        // Counted first, so the body's decrement can never come before it.
        STRAY_BLOCKING_CALLS.fetch_add(1, Ordering::AcqRel);
        if self
            .state
            .compare_exchange(RUNNING, GIVEN_UP, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            // The body had ended already.
            STRAY_BLOCKING_CALLS.fetch_sub(1, Ordering::AcqRel);
        }
    }
}
