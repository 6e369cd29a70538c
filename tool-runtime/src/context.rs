//! What a running call can see besides its arguments: its [`ToolContext`]
//! (the call id and a [`Cancellation`] signal) and the registry's shared
//! [`State`]. None of it appears in a tool's schema.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::ops::Deref;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use crate::bind::Coerced;
use crate::output::ToolOutput;

/// What the registry knows about a call while starting it. A tool turns it
/// into a [`ToolContext`] or takes shared state from it only when it needs
/// them, so calls of tools that take neither pay for neither.
#[derive(Clone, Copy, Debug)]
pub struct CallScope<'a> {
    call_id: Option<&'a str>,
    tool: &'a str,
    cancellation: Option<&'a Cancellation>,
    states: &'a StateMap,
    null_is_absent: bool,
    coerced: Option<&'a Coerced>,
    finished: Option<&'a Finished>,
}

/// Where a call the registry lets finish while it starts leaves its output
/// (see [`CallScope::with_finish_now`]).
#[derive(Debug, Default)]
pub(crate) struct Finished {
    output: Mutex<Option<ToolOutput>>,
    /// The body began to run: its arguments were all bound, so a panic
    /// from here on is the tool's, after binding.
    began: AtomicBool,
}

impl Finished {
    /// Notes that the body begins to run.
    pub(crate) fn begin(&self) {
        self.began.store(true, Ordering::Relaxed);
    }

    /// Whether the body began to run.
    pub(crate) fn began(&self) -> bool {
        self.began.load(Ordering::Relaxed)
    }

    /// Leaves the output of a call that finished while starting.
    pub(crate) fn put(&self, output: ToolOutput) {
        *self.output.lock().unwrap_or_else(PoisonError::into_inner) = Some(output);
    }

    /// The output left here, if the call finished while starting.
    pub(crate) fn take(&mut self) -> Option<ToolOutput> {
        self.output.get_mut().unwrap_or_else(PoisonError::into_inner).take()
    }
}

impl<'a> CallScope<'a> {
    pub(crate) fn new(
        call_id: Option<&'a str>,
        tool: &'a str,
        cancellation: Option<&'a Cancellation>,
        states: &'a StateMap,
    ) -> Self {
        CallScope {
            call_id,
            tool,
            cancellation,
            states,
            null_is_absent: false,
            coerced: None,
            finished: None,
        }
    }

    /// Lets a tool whose body never waits run this call to its end while
    /// starting it, leaving the output in `finished` rather than in a
    /// future (only when nothing must happen between the start and the
    /// run: no gate of sequential tools to wait for).
    pub(crate) fn with_finish_now(mut self, finished: Option<&'a Finished>) -> Self {
        self.finished = finished;
        self
    }

    pub(crate) fn finished(&self) -> Option<&'a Finished> {
        self.finished
    }

    /// Lets the typed parse coerce this call's arguments (lenient mode),
    /// recording its warnings in `coerced`.
    pub(crate) fn with_coercions(mut self, coerced: Option<&'a Coerced>) -> Self {
        self.coerced = coerced;
        self
    }

    pub(crate) fn coerced(&self) -> Option<&'a Coerced> {
        self.coerced
    }

    /// Marks `null` as "not given" for this call: the model was sent strict
    /// definitions, which make it send `null` for what it leaves unset.
    pub(crate) fn with_null_as_absent(mut self, null_is_absent: bool) -> Self {
        self.null_is_absent = null_is_absent;
        self
    }

    /// Whether a `null` for a parameter with a default means "not given"
    /// (no warning) rather than a value the binder replaces (a warning).
    pub fn null_is_absent(&self) -> bool {
        self.null_is_absent
    }

    /// A scope for starting a tool outside a registry (in tests): no call
    /// id, no shared state, no cancellation.
    pub fn detached(tool: &'a str) -> Self {
        static NO_STATE: OnceLock<StateMap> = OnceLock::new();
        CallScope::new(None, tool, None, NO_STATE.get_or_init(StateMap::default))
    }

    /// The call's context. A call that came without an id gets one made up
    /// here (`call_<n>`).
    ///
    /// Its cancellation signal is raised on a time-out or a dropped call
    /// only for a tool whose definition says it takes a context
    /// ([`ToolDefinition::with_context_param`](crate::ToolDefinition::with_context_param),
    /// which `#[tool]` sets for a `ToolContext` parameter), or when the
    /// caller passed a signal of its own; otherwise no one raises it.
    pub fn context(&self) -> ToolContext {
        let call_id: Arc<str> = match self.call_id {
            Some(id) => id.into(),
            None => next_call_id().into(),
        };
        ToolContext {
            call_id,
            tool: self.tool.into(),
            cancellation: self.cancellation.cloned().unwrap_or_default(),
            states: self.states.clone(),
        }
    }

    /// Shared state of type `T`, if the registry holds one.
    pub fn state<T: Send + Sync + 'static>(&self) -> Option<State<T>> {
        self.states.get::<T>()
    }
}

/// A shared state type a tool needs the registry to hold.
#[derive(Clone, Copy, Debug)]
pub(crate) struct StateRequirement {
    /// The state's type.
    pub(crate) type_id: TypeId,
    /// Its name, for error messages.
    pub(crate) type_name: &'static str,
}

impl StateRequirement {
    /// The requirement for state of type `T`.
    pub(crate) fn of<T: Send + Sync + 'static>() -> Self {
        StateRequirement {
            type_id: TypeId::of::<T>(),
            type_name: std::any::type_name::<T>(),
        }
    }
}

/// A made-up call id, for calls that came without one.
fn next_call_id() -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    format!("call_{}", NEXT.fetch_add(1, Ordering::Relaxed))
}

/// Per-call context a tool can take as a parameter; never in the schema.
///
/// ```
/// use tool_runtime::{tool, ToolContext};
///
/// /// Report which call this is.
/// #[tool]
/// async fn whoami(ctx: ToolContext) -> String {
///     format!("call {}", ctx.call_id())
/// }
/// ```
#[derive(Clone, Debug)]
pub struct ToolContext {
    call_id: Arc<str>,
    tool: Arc<str>,
    cancellation: Cancellation,
    states: StateMap,
}

impl ToolContext {
    /// A context for calling a tool outside a registry (in tests).
    pub fn detached(call_id: &str, tool: &str) -> Self {
        ToolContext {
            call_id: call_id.into(),
            tool: tool.into(),
            cancellation: Cancellation::new(),
            states: StateMap::default(),
        }
    }

    /// The provider's id of this call (`toolu_...`, `call_...`), or one the
    /// registry made up when the caller gave none.
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// The tool's wire name.
    pub fn tool_name(&self) -> &str {
        &self.tool
    }

    /// The signal that the call was cancelled or timed out; a long-running
    /// tool checks it or awaits [`Cancellation::cancelled`] to stop early.
    pub fn cancellation(&self) -> &Cancellation {
        &self.cancellation
    }

    /// Shared state of type `T`, if the registry holds one.
    pub fn state<T: Send + Sync + 'static>(&self) -> Option<State<T>> {
        self.states.get::<T>()
    }
}

/// A cancellation signal shared between the registry and a running tool.
#[derive(Clone, Debug, Default)]
pub struct Cancellation {
    inner: Arc<CancellationInner>,
}

#[derive(Debug, Default)]
struct CancellationInner {
    cancelled: AtomicBool,
    notify: tokio::sync::Notify,
}

impl Cancellation {
    /// A signal not yet raised.
    pub fn new() -> Self {
        Self::default()
    }

    /// Raises the signal; every waiter wakes.
    pub fn cancel(&self) {
        self.inner.cancelled.store(true, Ordering::SeqCst);
        self.inner.notify.notify_waiters();
    }

    /// Whether the signal was raised.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancelled.load(Ordering::SeqCst)
    }

    /// Completes when the signal is raised.
    pub async fn cancelled(&self) {
        loop {
            let notified = self.inner.notify.notified();
            if self.is_cancelled() {
                return;
            }
            notified.await;
        }
    }
}

/// Shared state a tool takes as a parameter (`db: State<Pool>`); the registry
/// holds one value per type, added with [`crate::ToolRegistry::with_state`].
///
/// It dereferences to `T`, so `state.field` and `state.method()` reach the
/// value directly.
pub struct State<T: ?Sized>(Arc<T>);

impl<T: ?Sized> State<T> {
    /// Wraps shared state.
    pub fn new(value: Arc<T>) -> Self {
        State(value)
    }

    /// The shared handle, to keep the state beyond the call.
    pub fn arc(&self) -> &Arc<T> {
        &self.0
    }
}

impl<T: ?Sized> Clone for State<T> {
    fn clone(&self) -> Self {
        State(self.0.clone())
    }
}

impl<T: ?Sized> Deref for State<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for State<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("State").field(&&*self.0).finish()
    }
}

/// The registry's shared state, one value per type.
#[derive(Clone, Default)]
pub(crate) struct StateMap {
    values: Arc<HashMap<TypeId, Arc<dyn Any + Send + Sync>>>,
}

impl StateMap {
    pub(crate) fn insert<T: Send + Sync + 'static>(&mut self, value: T) {
        Arc::make_mut(&mut self.values).insert(TypeId::of::<T>(), Arc::new(value));
    }

    pub(crate) fn contains(&self, type_id: TypeId) -> bool {
        self.values.contains_key(&type_id)
    }

    pub(crate) fn get<T: Send + Sync + 'static>(&self) -> Option<State<T>> {
        let value = self.values.get(&TypeId::of::<T>())?.clone();
        value.downcast::<T>().ok().map(State)
    }
}

impl fmt::Debug for StateMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StateMap").field("len", &self.values.len()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_is_found_by_type() {
        let mut states = StateMap::default();
        states.insert(41_u32);
        assert_eq!(*states.get::<u32>().unwrap(), 41);
        assert!(states.get::<u64>().is_none());
    }

    #[tokio::test]
    async fn cancellation_wakes_a_waiter() {
        let signal = Cancellation::new();
        let waiter = tokio::spawn({
            let signal = signal.clone();
            async move { signal.cancelled().await }
        });
        tokio::task::yield_now().await;
        signal.cancel();
        waiter.await.unwrap();
        assert!(signal.is_cancelled());
    }
}
