//! What a tool is to the registry: a [`ToolDefinition`] (name, description,
//! parameters, schema) and a way to start a call with bound arguments.
//!
//! `#[tool]` implements [`Tool`] for you; implement it by hand only for tools
//! whose parameters are known at run time.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::ops::Deref;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use serde_json::Value;

use crate::bind::{BindMode, BoundArguments};
use crate::codes::CallError;
use crate::output::ToolOutput;
use crate::registry::CallArguments;
use crate::schema::{Field, ObjectShape};

/// The future of one running tool call.
pub type ToolFuture = Pin<Box<dyn Future<Output = ToolOutput> + Send + 'static>>;

/// A tool the registry can describe to a model and call.
pub trait Tool: Send + Sync + 'static {
    /// The tool's name, description, parameters and schema, built once.
    fn definition(&self) -> &ToolDefinition;

    /// Takes the parameters out of normalized `arguments` and starts the
    /// call. Errors are arguments that passed the schema but were refused by
    /// a parameter type's `Deserialize`.
    fn invoke(&self, arguments: BoundArguments, scope: &CallScope<'_>) -> Result<ToolFuture, Vec<CallError>>;

    /// Starts the call straight from the arguments as sent, when they are
    /// already exactly right (no coercion, no default replacing a `null`, no
    /// unknown key, every bound met); `None` sends the call through
    /// [`normalize`](crate::bind::normalize) and [`Tool::invoke`]. `#[tool]`
    /// implements it with a typed parse; a hand-written tool may leave it.
    fn invoke_fast(&self, arguments: &CallArguments, scope: &CallScope<'_>) -> Option<ToolFuture> {
        let _ = (arguments, scope);
        None
    }
}

/// What the registry knows about a call while starting it. A tool turns it
/// into a [`ToolContext`] or takes shared state from it only when it needs
/// them, so calls of tools that take neither pay for neither.
#[derive(Clone, Copy, Debug)]
pub struct CallScope<'a> {
    call_id: Option<&'a str>,
    tool: &'a str,
    cancellation: Option<&'a Cancellation>,
    states: &'a StateMap,
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
        }
    }

    /// A scope for starting a tool outside a registry (in tests): no call
    /// id, no shared state, no cancellation.
    pub fn detached(tool: &'a str) -> Self {
        static NO_STATE: OnceLock<StateMap> = OnceLock::new();
        CallScope::new(None, tool, None, NO_STATE.get_or_init(StateMap::default))
    }

    /// The call's context. A call that came without an id gets one made up
    /// here (`call_<n>`).
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

/// A made-up call id, for calls that came without one.
fn next_call_id() -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    format!("call_{}", NEXT.fetch_add(1, Ordering::Relaxed))
}

/// Everything the registry and the provider formats know about a tool,
/// computed once per tool (the schema is never rebuilt per call).
#[derive(Debug)]
pub struct ToolDefinition {
    name: String,
    description: String,
    params: ObjectShape,
    input_schema: Value,
    output_schema: Option<Value>,
    mode: Option<BindMode>,
    sequential: bool,
    tags: Vec<String>,
    annotations: ToolAnnotations,
    states: Vec<StateRequirement>,
    takes_context: bool,
    fast_path: bool,
    pub(crate) rendered: crate::format::RenderCache,
}

/// Hints an MCP client shows or acts on; all optional.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ToolAnnotations {
    /// A human-readable title.
    pub title: Option<String>,
    /// The tool does not change its environment.
    pub read_only: Option<bool>,
    /// The tool may destroy data (meaningful when not read-only).
    pub destructive: Option<bool>,
    /// Calling it twice with the same arguments has no further effect.
    pub idempotent: Option<bool>,
    /// The tool reaches outside systems (the web, other services).
    pub open_world: Option<bool>,
}

impl ToolAnnotations {
    /// No hint is set.
    pub fn is_empty(&self) -> bool {
        *self == ToolAnnotations::default()
    }
}

/// A shared state type a tool needs the registry to hold.
#[derive(Clone, Copy, Debug)]
pub struct StateRequirement {
    /// The state's type.
    pub type_id: TypeId,
    /// Its name, for error messages.
    pub type_name: &'static str,
}

impl StateRequirement {
    /// The requirement for state of type `T`.
    pub fn of<T: Send + Sync + 'static>() -> Self {
        StateRequirement {
            type_id: TypeId::of::<T>(),
            type_name: std::any::type_name::<T>(),
        }
    }
}

impl ToolDefinition {
    /// A definition with these parameters; the schema is rendered here, once.
    pub fn new(name: impl Into<String>, description: impl Into<String>, params: Vec<Field>) -> Self {
        let params = ObjectShape {
            fields: params,
            rejects_unknown: true,
        };
        let input_schema = params.to_json_schema();
        let fast_path = params.typed_parse_is_exact();
        ToolDefinition {
            name: name.into(),
            description: description.into(),
            params,
            input_schema,
            output_schema: None,
            mode: None,
            sequential: false,
            tags: Vec::new(),
            annotations: ToolAnnotations::default(),
            states: Vec::new(),
            takes_context: false,
            fast_path,
            rendered: Default::default(),
        }
    }

    /// Declares that the tool takes a [`ToolContext`], so the registry
    /// gives each call a cancellation signal it raises on time-out.
    pub fn with_context_param(mut self, takes_context: bool) -> Self {
        self.takes_context = takes_context;
        self
    }

    /// Whether the tool takes a [`ToolContext`].
    pub fn takes_context(&self) -> bool {
        self.takes_context
    }

    /// Whether a typed parse of these parameters accepts exactly what the
    /// binder accepts without a warning, so [`Tool::invoke_fast`] may be
    /// tried first. False when a nested struct ignores unknown keys (the
    /// binder would warn about them), or a defaulted parameter or field's
    /// type takes `null` (a `serde_json::Value`, an `Option` behind a
    /// newtype or alias), which a typed parse would keep where the binder
    /// uses the default. Bounds, `null` where it is not allowed, and `f32`
    /// rounding are checked on the typed values the same way the binder
    /// checks them.
    pub fn has_fast_path(&self) -> bool {
        self.fast_path
    }

    /// Binds this tool's arguments in `mode` whatever the registry's mode.
    pub fn with_mode(mut self, mode: BindMode) -> Self {
        self.mode = Some(mode);
        self
    }

    /// Marks the tool as one that must not run beside any other call.
    pub fn sequential(mut self, sequential: bool) -> Self {
        self.sequential = sequential;
        self
    }

    /// Sets the tags used to choose tool subsets.
    pub fn with_tags<I: IntoIterator<Item = S>, S: Into<String>>(mut self, tags: I) -> Self {
        self.tags = tags.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the MCP annotations.
    pub fn with_annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.annotations = annotations;
        self
    }

    /// Sets the schema of the structured result.
    pub fn with_output_schema(mut self, schema: Option<Value>) -> Self {
        self.output_schema = schema;
        self
    }

    /// Replaces the schema the provider formats render, keeping the
    /// parameters the binder checks: for a tool whose schema was written
    /// elsewhere (a mounted MCP tool's) and holds more than they express.
    pub fn with_input_schema(mut self, schema: Value) -> Self {
        self.input_schema = schema;
        self
    }

    /// Declares state the registry must hold before this tool registers.
    pub fn requires_state(mut self, requirement: StateRequirement) -> Self {
        self.states.push(requirement);
        self
    }

    /// The wire name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What the model reads about when and how to use the tool.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The parameters the model sees, in declaration order.
    pub fn params(&self) -> &ObjectShape {
        &self.params
    }

    /// The portable JSON Schema of the parameters.
    pub fn input_schema(&self) -> &Value {
        &self.input_schema
    }

    /// The JSON Schema of the structured result, for structured return types.
    pub fn output_schema(&self) -> Option<&Value> {
        self.output_schema.as_ref()
    }

    /// The binding mode this tool insists on, if any.
    pub fn mode(&self) -> Option<BindMode> {
        self.mode
    }

    /// The tool must not run beside any other call.
    pub fn is_sequential(&self) -> bool {
        self.sequential
    }

    /// The tags used to choose tool subsets.
    pub fn tags(&self) -> &[String] {
        &self.tags
    }

    /// The MCP annotations.
    pub fn annotations(&self) -> &ToolAnnotations {
        &self.annotations
    }

    /// The shared state types the tool needs.
    pub fn states(&self) -> &[StateRequirement] {
        &self.states
    }
}

/// Whether `name` is a valid tool name: `^[a-zA-Z0-9_-]{1,64}$`.
pub fn is_valid_tool_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
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

/// A definition built on first use and kept for the life of the program;
/// the generated code keeps one per tool.
#[doc(hidden)]
pub type LazyDefinition = OnceLock<ToolDefinition>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names_follow_the_provider_rule() {
        assert!(is_valid_tool_name("search_files"));
        assert!(is_valid_tool_name("a-b_9"));
        assert!(!is_valid_tool_name(""));
        assert!(!is_valid_tool_name("has space"));
        assert!(!is_valid_tool_name("dotted.name"));
        assert!(!is_valid_tool_name(&"x".repeat(65)));
    }

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
