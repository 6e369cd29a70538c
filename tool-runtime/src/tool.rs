//! What a tool is to the registry: a [`ToolDefinition`] (name, description,
//! parameters, schema) and a way to start a call with bound arguments.
//!
//! `#[tool]` implements [`Tool`] for you; implement it by hand only for tools
//! whose parameters are known at run time.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};

use serde_json::Value;

use crate::bind::{BindMode, BoundArguments};
use crate::call::Arguments;
use crate::codes::CallError;
use crate::context::{CallScope, StateRequirement};
use crate::output::ToolOutput;
use crate::schema::{Field, ObjectShape, Schema, Shape, object_shapes};

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
    /// the full binder and [`Tool::invoke`]. In lenient
    /// mode the registry's `scope` also lets it make the commonest coercions
    /// of a parameter's own value, exactly as the binder would, recording
    /// the same warnings. `#[tool]` implements it with a typed parse; a
    /// hand-written tool may leave it.
    fn invoke_fast(&self, arguments: &Arguments<'_>, scope: &CallScope<'_>) -> Option<ToolFuture> {
        let _ = (arguments, scope);
        None
    }
}

/// Everything the registry and the provider formats know about a tool,
/// computed once per tool (the schema is never rebuilt per call).
#[derive(Debug)]
pub struct ToolDefinition {
    /// Shared with the results of its calls, so a call copies no name.
    name: Arc<str>,
    description: String,
    params: ObjectShape,
    input_schema: Schema,
    output_schema: Option<Schema>,
    /// The shape the output schema was rendered from, when there is one.
    output_shape: Option<Shape>,
    mode: Option<BindMode>,
    sequential: bool,
    blocking: bool,
    tags: Vec<String>,
    annotations: ToolAnnotations,
    states: Vec<StateRequirement>,
    takes_context: bool,
}

/// Hints an MCP client shows or acts on; all optional. Build with
/// `ToolAnnotations::default().read_only(true)` and the like.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
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
    /// Sets the human-readable title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Sets whether the tool leaves its environment unchanged.
    pub fn read_only(mut self, read_only: bool) -> Self {
        self.read_only = Some(read_only);
        self
    }

    /// Sets whether the tool may destroy data.
    pub fn destructive(mut self, destructive: bool) -> Self {
        self.destructive = Some(destructive);
        self
    }

    /// Sets whether a second identical call has no further effect.
    pub fn idempotent(mut self, idempotent: bool) -> Self {
        self.idempotent = Some(idempotent);
        self
    }

    /// Sets whether the tool reaches outside systems.
    pub fn open_world(mut self, open_world: bool) -> Self {
        self.open_world = Some(open_world);
        self
    }

    /// No hint is set.
    pub fn is_empty(&self) -> bool {
        *self == ToolAnnotations::default()
    }
}

impl ToolDefinition {
    /// A definition with these parameters; the schema is rendered here, once.
    pub fn new(name: impl Into<String>, description: impl Into<String>, params: Vec<Field>) -> Self {
        let params = ObjectShape::new(params, true);
        let mut objects = vec![&params];
        for field in &params.fields {
            object_shapes(&field.shape, &mut objects);
        }
        let input_schema = Schema::new(params.to_json_schema(), &objects);
        ToolDefinition {
            name: Arc::from(name.into()),
            description: description.into(),
            params,
            input_schema,
            output_schema: None,
            output_shape: None,
            mode: None,
            sequential: false,
            blocking: false,
            tags: Vec::new(),
            annotations: ToolAnnotations::default(),
            states: Vec::new(),
            takes_context: false,
        }
    }

    /// Declares that the tool takes a [`ToolContext`](crate::ToolContext), so the registry
    /// gives each call a cancellation signal it raises on time-out.
    pub fn with_context_param(mut self, takes_context: bool) -> Self {
        self.takes_context = takes_context;
        self
    }

    /// Whether the tool takes a [`ToolContext`](crate::ToolContext).
    pub fn takes_context(&self) -> bool {
        self.takes_context
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

    /// Marks the tool as one whose body runs on the blocking pool (a plain
    /// `fn` tool; `#[tool]` sets it). Such a body cannot be stopped at its
    /// time limit, so the registry bounds how many may still be running
    /// ([`crate::ToolRegistry::with_max_stray_blocking_calls`]).
    pub fn blocking(mut self, blocking: bool) -> Self {
        self.blocking = blocking;
        self
    }

    /// The tool's body runs on the blocking pool.
    pub fn is_blocking(&self) -> bool {
        self.blocking
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

    /// Sets the schema of the structured result, for a tool whose result
    /// is a JSON object (MCP's `outputSchema`). Prefer
    /// [`ToolDefinition::with_output_shape`] where the result's type has a
    /// [`Shape`]: its properties then keep their declaration order.
    pub fn with_output_schema(mut self, schema: Option<Value>) -> Self {
        self.output_schema = schema.map(|s| Schema::new(s, &[]));
        self.output_shape = None;
        self
    }

    /// Sets the structured result's shape (what `#[tool]` does for a
    /// return type that derives `ToolParam`); the output schema is rendered
    /// from it.
    pub fn with_output_shape(mut self, shape: Option<Shape>) -> Self {
        self.output_schema = shape.as_ref().map(|shape| {
            let mut objects = Vec::new();
            object_shapes(shape, &mut objects);
            Schema::new(shape.to_output_schema(), &objects)
        });
        self.output_shape = shape;
        self
    }

    /// The structured result's shape, when it was set from one.
    pub(crate) fn output_shape(&self) -> Option<&Shape> {
        self.output_shape.as_ref()
    }

    /// Every object shape of the parameters and the output, outermost
    /// first: what a rendering of this tool orders its properties after.
    pub(crate) fn object_shapes(&self) -> Vec<&ObjectShape> {
        let mut objects = vec![&self.params];
        for field in &self.params.fields {
            object_shapes(&field.shape, &mut objects);
        }
        if let Some(shape) = &self.output_shape {
            object_shapes(shape, &mut objects);
        }
        objects
    }

    /// Replaces the schema the provider formats render, keeping the
    /// parameters the binder checks: for a tool whose schema was written
    /// elsewhere (a mounted MCP tool's) and holds more than they express.
    pub fn with_input_schema(mut self, schema: Value) -> Self {
        let objects = self.object_shapes();
        self.input_schema = Schema::new(schema, &objects);
        self
    }

    /// Binds keys no parameter names as `others` (a mounted tool's
    /// `additionalProperties` schema) instead of ignoring them.
    #[cfg(feature = "mcp")]
    pub(crate) fn with_other_params(mut self, others: Option<Box<Shape>>) -> Self {
        self.params.others = others;
        self
    }

    /// Keys no parameter names are passed on to the tool (a remote tool
    /// whose schema is open), not ignored.
    #[cfg(feature = "mcp")]
    pub(crate) fn with_open_params(mut self, open: bool) -> Self {
        self.params.keeps_unknown = open;
        self
    }

    /// Declares that the tool takes `State<T>`: the registry must hold a
    /// `T` before the tool registers.
    pub fn requires_state<T: Send + Sync + 'static>(mut self) -> Self {
        self.states.push(StateRequirement::of::<T>());
        self
    }

    /// The wire name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The wire name, shared.
    pub(crate) fn shared_name(&self) -> Arc<str> {
        Arc::clone(&self.name)
    }

    /// What the model reads about when and how to use the tool.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The parameters the model sees, in declaration order.
    pub fn params(&self) -> &ObjectShape {
        &self.params
    }

    /// The portable JSON Schema of the parameters (SPEC section 3). It reads
    /// as a `serde_json::Value` and serializes with the parameters in
    /// declaration order.
    pub fn input_schema(&self) -> &Schema {
        &self.input_schema
    }

    /// The JSON Schema of the structured result, for structured return types.
    pub fn output_schema(&self) -> Option<&Schema> {
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
    pub(crate) fn states(&self) -> &[StateRequirement] {
        &self.states
    }
}

/// Whether `name` is a valid tool name: `^[a-zA-Z0-9_-]{1,64}$`.
pub fn is_valid_tool_name(name: &str) -> bool {
    is_short_ascii_name(name, b"_-")
}

/// Whether `name` is a property key every provider accepts:
/// `^[a-zA-Z0-9_.-]{1,64}$` (Anthropic's rule, the strictest), as
/// `#[tool]` and `#[derive(ToolParam)]` check it at compile time.
pub(crate) fn is_valid_property_name(name: &str) -> bool {
    is_short_ascii_name(name, b"_.-")
}

/// Whether `name` is 1 to 64 ASCII letters, digits and `punctuation`.
fn is_short_ascii_name(name: &str, punctuation: &[u8]) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || punctuation.contains(&b))
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
}
