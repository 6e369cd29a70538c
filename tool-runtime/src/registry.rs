//! The [`ToolRegistry`]: the tools an application offers, the shared state
//! they need, and how their calls are bound and run.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};

use crate::bind::{self, BindMode};
use crate::codes::{CallError, ErrorCode};
use crate::tool::{StateMap, Tool, ToolDefinition, is_valid_tool_name};

/// The tools an application offers a model, and the settings their calls
/// run with.
///
/// ```
/// use tool_runtime::{tool, ToolRegistry};
///
/// /// Add two integers.
/// #[tool]
/// async fn add(
///     #[param(description = "The first addend")] a: i64,
///     #[param(description = "The second addend")] b: i64,
/// ) -> i64 {
///     a + b
/// }
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let mut registry = ToolRegistry::new();
/// registry.register(Add)?;
/// let result = registry.call("add", r#"{"a": 2, "b": "40"}"#).await;
/// assert_eq!(result.text(), "42");
/// assert_eq!(result.warning_codes(), ["string_literal_converted_to_integer:b"]);
/// # Ok::<(), tool_runtime::RegistryError>(())
/// # }).unwrap();
/// ```
pub struct ToolRegistry {
    pub(crate) tools: Vec<Arc<dyn Tool>>,
    index: HashMap<String, usize>,
    pub(crate) states: StateMap,
    pub(crate) settings: Settings,
    /// Concurrent calls hold it shared, `sequential` tools exclusively, so a
    /// sequential tool never overlaps another call.
    pub(crate) gate: Arc<tokio::sync::RwLock<()>>,
    /// Some registered tool is sequential (otherwise nobody takes the gate).
    pub(crate) has_sequential: bool,
}

#[derive(Clone, Debug)]
pub(crate) struct Settings {
    pub(crate) mode: BindMode,
    pub(crate) timeout: Option<Duration>,
    pub(crate) concurrency: usize,
    pub(crate) max_argument_bytes: usize,
    pub(crate) fast_path: bool,
}

/// Why a tool could not be registered.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RegistryError {
    /// A tool of this name is already registered.
    DuplicateName(String),
    /// The name breaks `^[a-zA-Z0-9_-]{1,64}$` (only possible for hand-written tools).
    InvalidName(String),
    /// The tool's definition could not be built (a parameter type that
    /// contains itself, say: schemas are inlined, so it has no finite schema).
    InvalidDefinition(String),
    /// The tool takes `State<T>` and the registry holds no `T`; add it with
    /// [`ToolRegistry::with_state`] before registering.
    MissingState {
        /// The tool's name.
        tool: String,
        /// The state type it needs.
        type_name: &'static str,
    },
}

impl fmt::Display for RegistryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RegistryError::DuplicateName(name) => {
                write!(f, "a tool named `{name}` is already registered")
            }
            RegistryError::InvalidName(name) => {
                write!(
                    f,
                    "`{name}` is not a valid tool name (it must match ^[a-zA-Z0-9_-]{{1,64}}$)"
                )
            }
            RegistryError::InvalidDefinition(why) => write!(f, "the tool's definition could not be built: {why}"),
            RegistryError::MissingState { tool, type_name } => write!(
                f,
                "the tool `{tool}` needs shared state of type `{type_name}`; add it with `with_state` before registering the tool"
            ),
        }
    }
}

impl std::error::Error for RegistryError {}

/// The arguments of a call: a JSON value, or the raw text a provider sent
/// (OpenAI sends arguments as a string).
#[derive(Clone, Debug, PartialEq)]
pub enum CallArguments {
    /// Arguments already parsed.
    Json(Value),
    /// Raw argument text; empty text and `null` mean `{}`.
    Text(String),
}

impl From<Value> for CallArguments {
    fn from(value: Value) -> Self {
        CallArguments::Json(value)
    }
}

impl From<Map<String, Value>> for CallArguments {
    fn from(map: Map<String, Value>) -> Self {
        CallArguments::Json(Value::Object(map))
    }
}

impl From<String> for CallArguments {
    fn from(text: String) -> Self {
        CallArguments::Text(text)
    }
}

impl From<&str> for CallArguments {
    fn from(text: &str) -> Self {
        CallArguments::Text(text.to_owned())
    }
}

impl From<&String> for CallArguments {
    fn from(text: &String) -> Self {
        CallArguments::Text(text.clone())
    }
}

/// One call a model asked for.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolCall {
    /// The provider's id (`toolu_...`, `call_...`); `None` when it gave none.
    pub id: Option<String>,
    /// The tool's name as the model wrote it.
    pub name: String,
    /// The arguments as the model sent them.
    pub arguments: CallArguments,
}

impl ToolCall {
    /// A call with no id.
    pub fn new(name: impl Into<String>, arguments: impl Into<CallArguments>) -> Self {
        ToolCall {
            id: None,
            name: name.into(),
            arguments: arguments.into(),
        }
    }

    /// Sets the provider's id.
    pub fn with_id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }
}

impl Default for ToolRegistry {
    fn default() -> Self {
        Self::new()
    }
}

impl ToolRegistry {
    /// An empty registry: lenient binding, a 60 s timeout per call, 8
    /// concurrent calls, argument text up to 1 MiB.
    pub fn new() -> Self {
        ToolRegistry {
            tools: Vec::new(),
            index: HashMap::new(),
            states: StateMap::default(),
            settings: Settings {
                mode: BindMode::Lenient,
                timeout: Some(Duration::from_secs(60)),
                concurrency: 8,
                max_argument_bytes: 1 << 20,
                fast_path: true,
            },
            gate: Arc::default(),
            has_sequential: false,
        }
    }

    /// Binds every tool's arguments in `mode` (a tool's own `#[tool(strict)]`
    /// still wins).
    pub fn with_mode(mut self, mode: BindMode) -> Self {
        self.settings.mode = mode;
        self
    }

    /// Shorthand for `with_mode(BindMode::Strict)`.
    pub fn strict(self) -> Self {
        self.with_mode(BindMode::Strict)
    }

    /// Stops each call after `timeout` (`None`: never).
    pub fn with_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.settings.timeout = timeout;
        self
    }

    /// Runs at most `limit` calls of one batch at once (at least 1).
    pub fn with_concurrency(mut self, limit: usize) -> Self {
        self.settings.concurrency = limit.max(1);
        self
    }

    /// Refuses raw argument text longer than `bytes` (`arguments_too_large`).
    pub fn with_max_argument_bytes(mut self, bytes: usize) -> Self {
        self.settings.max_argument_bytes = bytes;
        self
    }

    /// Whether calls whose arguments are already right take the tool's
    /// typed fast path (the default). Both paths give the same results;
    /// turning it off is for comparing them.
    pub fn with_fast_path(mut self, enabled: bool) -> Self {
        self.settings.fast_path = enabled;
        self
    }

    /// Holds `value` as shared state for tools taking `State<T>`; one value
    /// per type, a second replaces the first. Add state before registering
    /// the tools that need it.
    pub fn with_state<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        self.states.insert(value);
        self
    }

    /// The shared state of type `T`, if the registry holds one.
    pub fn state<T: Send + Sync + 'static>(&self) -> Option<crate::State<T>> {
        self.states.get::<T>()
    }

    /// Adds a tool. Fails on a duplicate name, an invalid name, or state
    /// the tool needs and the registry does not hold.
    pub fn register(&mut self, tool: impl Tool) -> Result<&mut Self, RegistryError> {
        self.register_arc(Arc::new(tool))
    }

    /// Adds a tool already behind an `Arc` (shared with another registry).
    pub fn register_arc(&mut self, tool: Arc<dyn Tool>) -> Result<&mut Self, RegistryError> {
        // Building the definition runs the parameter types' `shape()`, which
        // panics for a type that contains itself.
        let definition = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| tool.definition()))
            .map_err(|panic| RegistryError::InvalidDefinition(crate::dispatch::panic_message(&*panic)))?;
        let name = definition.name();
        if !is_valid_tool_name(name) {
            return Err(RegistryError::InvalidName(name.to_owned()));
        }
        if self.index.contains_key(name) {
            return Err(RegistryError::DuplicateName(name.to_owned()));
        }
        if let Some(missing) = definition.states().iter().find(|s| !self.states.contains(s.type_id)) {
            return Err(RegistryError::MissingState {
                tool: name.to_owned(),
                type_name: missing.type_name,
            });
        }
        self.has_sequential |= definition.is_sequential();
        self.index.insert(name.to_owned(), self.tools.len());
        self.tools.push(tool);
        Ok(self)
    }

    /// The tool of this name.
    pub fn get(&self, name: &str) -> Option<&dyn Tool> {
        self.index.get(name).map(|&i| &*self.tools[i])
    }

    /// The names of every tool, in registration order.
    pub fn names(&self) -> impl Iterator<Item = &str> + Clone {
        self.tools.iter().map(|t| t.definition().name())
    }

    /// Every tool's definition, in registration order.
    pub fn definitions(&self) -> impl Iterator<Item = &ToolDefinition> {
        self.tools.iter().map(|t| t.definition())
    }

    /// How many tools are registered.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// No tool is registered.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// The mode a tool's arguments are bound in.
    pub(crate) fn mode_for(&self, definition: &ToolDefinition) -> BindMode {
        definition.mode().unwrap_or(self.settings.mode)
    }

    /// Parses call arguments into an object, within the size limit.
    pub(crate) fn argument_object(&self, arguments: CallArguments) -> Result<Map<String, Value>, CallError> {
        match arguments {
            CallArguments::Json(value) => bind::arguments_object(value),
            CallArguments::Text(text) => {
                self.check_size(&text)?;
                bind::parse_raw_arguments(&text)
            }
        }
    }

    /// Refuses raw argument text over the size limit.
    pub(crate) fn check_size(&self, text: &str) -> Result<(), CallError> {
        let limit = self.settings.max_argument_bytes;
        if text.len() > limit {
            return Err(CallError::new(
                ErrorCode::ArgumentsTooLarge,
                "",
                format!("the arguments are {} bytes long; the limit is {limit}", text.len()),
            ));
        }
        Ok(())
    }
}

impl fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolRegistry")
            .field("tools", &self.names().collect::<Vec<_>>())
            .field("settings", &self.settings)
            .finish()
    }
}
