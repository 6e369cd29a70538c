//! Work on Tokio's blocking pool that may outlive the call waiting for it.
//!
//! A body on the pool cannot be stopped: when the call that waits for it is
//! given up (timed out, cancelled), the body runs on and holds its thread.
//! Such bodies are counted, across the process, as strays until they end,
//! so the registry can bound them ([`crate::ToolRegistry::stray_blocking_calls`]).
//! Two kinds run here: plain `fn` tool bodies (`__private::run_blocking`)
//! and the threads the MCP server runs each call on.

use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// What runs on the blocking pool, each kind counted as strays of its own:
/// a plain `fn` body holds its thread only for its tool, while a thread
/// the MCP server runs a call on stays stuck only when an async tool never
/// yields (a plain `fn` tool's call thread returns once its body is given up).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Work {
    /// A plain `fn` tool's body.
    ToolBody,
    /// The thread the MCP server runs one call on.
    CallThread,
}

/// Bodies of each kind still running on the blocking pool after their call
/// was given up, across the process: every registry shares the runtime's
/// pool.
static STRAY_TOOL_BODIES: AtomicUsize = AtomicUsize::new(0);
static STRAY_CALL_THREADS: AtomicUsize = AtomicUsize::new(0);

impl Work {
    fn strays(self) -> &'static AtomicUsize {
        match self {
            Work::ToolBody => &STRAY_TOOL_BODIES,
            Work::CallThread => &STRAY_CALL_THREADS,
        }
    }

    /// How many of this kind run on after their call was given up.
    pub(crate) fn stray_count(self) -> usize {
        self.strays().load(Ordering::Acquire)
    }
}

/// How many bodies of either kind run on after their call was given up.
pub(crate) fn stray_calls() -> usize {
    Work::ToolBody.stray_count() + Work::CallThread.stray_count()
}

/// What a plain `fn` tool's body that starts while it is set (see
/// [`HeldByBody::scope`]) holds until the body ends, even after its call
/// was given up: the registry's gate of sequential tools, so that a body
/// outliving its call still runs beside no call it must not run beside.
pub(crate) struct HeldByBody(Mutex<Option<Box<dyn Send>>>);

tokio::task_local! {
    static HELD_BY_BODY: Arc<HeldByBody>;
}

impl HeldByBody {
    /// Holds `held` for a body to take; dropped with the last handle if no
    /// body takes it.
    pub(crate) fn new(held: impl Send + 'static) -> Arc<Self> {
        Arc::new(HeldByBody(Mutex::new(Some(Box::new(held)))))
    }

    /// Runs `poll` (a poll of a call's future) with this set: a body that
    /// starts in it takes what is held.
    pub(crate) fn scope<R>(self: &Arc<Self>, poll: impl FnOnce() -> R) -> R {
        HELD_BY_BODY.sync_scope(Arc::clone(self), poll)
    }

    /// What is held for a body starting now, taken: none outside a scope.
    fn take() -> Option<Box<dyn Send>> {
        HELD_BY_BODY
            .try_with(|held| held.0.lock().unwrap_or_else(PoisonError::into_inner).take())
            .ok()
            .flatten()
    }
}

/// Runs `body`, work of the kind `work`, on the blocking pool and waits for
/// it. Dropping the returned future before the body ends counts the body
/// as a stray of its kind until it ends. A tool's body holds what the
/// registry set for it ([`HeldByBody`]) until it ends. The error is the
/// pool's: the body panicked (or the runtime shut down).
pub(crate) async fn run<T: Send + 'static>(
    work: Work,
    body: impl FnOnce() -> T + Send + 'static,
) -> Result<T, tokio::task::JoinError> {
    let strays = work.strays();
    let state = Arc::new(AtomicU8::new(RUNNING));
    let ended = EndWatch(Arc::clone(&state), strays);
    let held = match work {
        Work::ToolBody => HeldByBody::take(),
        Work::CallThread => None,
    };
    let task = tokio::task::spawn_blocking(move || {
        // Dropped when the body returns or unwinds, so a body that panics
        // after its call was given up stops counting as a stray too; what
        // it holds is let go first.
        let _ended = ended;
        let _held = held;
        body()
    });
    let mut watch = GiveUpWatch {
        state,
        strays,
        task: task.abort_handle(),
        armed: true,
    };
    let finished = task.await;
    watch.armed = false;
    finished
}

const RUNNING: u8 = 0;
const ENDED: u8 = 1;
const GIVEN_UP: u8 = 2;

/// Marks the body ended when it returns or panics; a body given up while
/// it ran is no stray any more.
struct EndWatch(Arc<AtomicU8>, &'static AtomicUsize);

impl Drop for EndWatch {
    fn drop(&mut self) {
        if self
            .0
            .compare_exchange(RUNNING, ENDED, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            self.1.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

/// Counts the body as a stray when the future waiting for it is dropped
/// while the body still runs. A body still queued for a thread is aborted
/// instead: it never starts, since its caller has given it up.
struct GiveUpWatch {
    state: Arc<AtomicU8>,
    strays: &'static AtomicUsize,
    task: tokio::task::AbortHandle,
    armed: bool,
}

impl Drop for GiveUpWatch {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        // A body not yet started never will be (its closure, with the
        // `EndWatch`, is dropped unrun: `RUNNING` becomes `ENDED`).
        self.task.abort();
        // Counted first, so the body's decrement can never come before it.
        self.strays.fetch_add(1, Ordering::AcqRel);
        if self
            .state
            .compare_exchange(RUNNING, GIVEN_UP, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            // The body had ended already, or will never start.
            self.strays.fetch_sub(1, Ordering::AcqRel);
        }
    }
}
