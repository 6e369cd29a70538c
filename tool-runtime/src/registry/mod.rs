//! The [`ToolRegistry`]: the tools an application offers, the shared state
//! they need, and how their calls are bound and run.

mod complete;
mod dispatch;
mod mounted;

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use serde_json::{Map, Value};

pub use complete::{Completion, ParamRow, ValueSource};
#[cfg(feature = "agent")]
pub(crate) use dispatch::{HeldSlot, Slots};
pub(crate) use mounted::ToolGroup;

use crate::bind::{self, BindMode, Report};
use crate::call::{Arguments, Repr};
use crate::codes::{CallError, ErrorCode};
use crate::context::StateMap;
use crate::format::{self, Format, Rendered, Selection, ToolDefinitions};
use crate::lint::LintFinding;
use crate::schema::{Kind, ObjectShape, Schema, Shape, object_shapes};
use crate::tool::{Tool, ToolDefinition, is_valid_property_name, is_valid_tool_name};
use mounted::Snapshot;

/// The most bytes of text a call answers with unless
/// [`ToolRegistry::with_max_output_bytes`] says otherwise: 100 KiB.
pub(crate) const DEFAULT_MAX_OUTPUT_BYTES: usize = 100 * 1024;

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
    entries: Vec<Entry>,
    index: HashMap<String, usize, NameHash>,
    /// Tools whose set changes on its own (mounted MCP servers'), after the
    /// registered ones, in the order they were added.
    groups: Vec<Arc<ToolGroup>>,
    /// Counts the groups' changes of set; whoever serves the registry
    /// watches it to tell its clients.
    group_changes: tokio::sync::watch::Sender<u64>,
    pub(crate) states: StateMap,
    pub(crate) settings: Settings,
    /// Concurrent calls hold it shared, `sequential` tools exclusively, so a
    /// sequential tool never overlaps another call.
    pub(crate) gate: Arc<tokio::sync::RwLock<()>>,
    /// Some registered tool is sequential (otherwise nobody takes the gate).
    pub(crate) has_sequential: bool,
}

/// The hash of the name index: tool names are short and chosen by the
/// application, not by whoever calls, so a fast multiplicative hash serves
/// where SipHash's protection against chosen keys is not needed. (A name a
/// model sends is only looked up; lookups of hostile names cost one hash
/// of at most the argument limit's bytes, like any other.)
#[derive(Clone, Copy, Default)]
struct NameHash;

impl std::hash::BuildHasher for NameHash {
    type Hasher = NameHasher;

    fn build_hasher(&self) -> NameHasher {
        NameHasher(0)
    }
}

struct NameHasher(u64);

impl std::hash::Hasher for NameHasher {
    fn write(&mut self, bytes: &[u8]) {
        const K: u64 = 0x517c_c1b7_2722_0a95;
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let word = u64::from_le_bytes(chunk.try_into().unwrap_or_default());
            self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(K);
        }
        for &byte in chunks.remainder() {
            self.0 = (self.0.rotate_left(5) ^ u64::from(byte)).wrapping_mul(K);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// A registered tool and its definition rendered in each format, each made
/// on first use and kept, so listing definitions renders nothing twice.
struct Entry {
    tool: Arc<dyn Tool>,
    rendered: [OnceLock<Schema>; Format::ALL.len()],
}

impl Entry {
    fn rendered(&self, format: Format) -> &Schema {
        self.rendered[format.slot()].get_or_init(|| {
            let definition = self.tool.definition();
            Schema::new(format::render(definition, format), &definition.object_shapes())
        })
    }
}

#[derive(Clone, Debug)]
pub(crate) struct Settings {
    pub(crate) mode: BindMode,
    pub(crate) timeout: Option<Duration>,
    pub(crate) concurrency: usize,
    pub(crate) max_argument_bytes: usize,
    pub(crate) max_output_bytes: Option<usize>,
    pub(crate) max_stray_blocking_calls: usize,
    pub(crate) fast_path: bool,
    pub(crate) null_is_absent: bool,
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
    /// contains itself, say: schemas are inlined, so it has no finite
    /// schema), or contradicts itself (a default outside its own bounds).
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

impl Default for ToolRegistry {
    fn default() -> Self {
        Self::new()
    }
}

impl ToolRegistry {
    /// An empty registry: lenient binding, a 60 s timeout per call, 8
    /// concurrent calls, arguments up to 1 MiB, output text up to 100 KiB.
    pub fn new() -> Self {
        ToolRegistry {
            entries: Vec::new(),
            index: HashMap::default(),
            groups: Vec::new(),
            group_changes: tokio::sync::watch::Sender::new(0),
            states: StateMap::default(),
            settings: Settings {
                mode: BindMode::Lenient,
                timeout: Some(Duration::from_secs(60)),
                concurrency: 8,
                max_argument_bytes: 1 << 20,
                max_output_bytes: Some(DEFAULT_MAX_OUTPUT_BYTES),
                max_stray_blocking_calls: 64,
                fast_path: true,
                null_is_absent: false,
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

    /// Refuses arguments longer than `bytes` (`arguments_too_large`): raw
    /// text by its length, an already parsed `serde_json::Value` by the
    /// length of its JSON text. The default is 1 MiB.
    pub fn with_max_argument_bytes(mut self, bytes: usize) -> Self {
        self.settings.max_argument_bytes = bytes;
        self
    }

    /// Keeps at most `bytes` of the text a call answers with (a tool's
    /// output, its `Err` message, a panic message, over all its text
    /// blocks and `text/*` documents) and appends, after the kept part, a
    /// one-line marker saying how many bytes were left out (`[output cut
    /// here: N more bytes left out]`, under 60 bytes); `None` never cuts.
    /// On by default at 100 KiB, sized for a model's context. The
    /// structured content of a result is not cut; Gemini, which sends it
    /// in place of the text, sends the text when it is longer than the
    /// limit.
    pub fn with_max_output_bytes(mut self, bytes: Option<usize>) -> Self {
        self.settings.max_output_bytes = bytes;
        self
    }

    /// Refuses calls of plain `fn` tools (`Outcome::Overloaded`) while
    /// `limit` or more plain `fn` bodies are still running after their call
    /// timed out or was cancelled (64 by default). Such a body cannot be
    /// stopped and holds a thread of the blocking pool until it returns;
    /// without a bound, enough of them take every thread, and every plain
    /// `fn` tool times out. Async tools are served whatever the count. A
    /// limit of 0 refuses every call of a plain `fn` tool.
    /// Over MCP every call holds a thread of that pool, which stays stuck
    /// past its limit only when an async tool never yields: such threads
    /// count as strays too, and at the bound (counted apart from the plain
    /// `fn` bodies) the server refuses every call.
    pub fn with_max_stray_blocking_calls(mut self, limit: usize) -> Self {
        self.settings.max_stray_blocking_calls = limit;
        self
    }

    /// How many plain `fn` tool bodies (and MCP server calls) are still
    /// running after their call timed out or was cancelled, counted across
    /// the process (registries share the runtime's blocking pool).
    pub fn stray_blocking_calls(&self) -> usize {
        crate::blocking::stray_calls()
    }

    /// Whether calls whose arguments are already right take the tool's
    /// typed fast path (the default). Both paths give the same results;
    /// turning it off is for comparing them.
    pub fn with_fast_path(mut self, enabled: bool) -> Self {
        self.settings.fast_path = enabled;
        self
    }

    /// Declares that the model is sent strict definitions
    /// ([`Format::AnthropicStrict`] and the like), under which it sends
    /// `null` for every optional parameter it leaves unset. Such a `null`
    /// then means "not given" (the default, or `None`) with no warning, and
    /// the call keeps the typed fast path. Off by default: a `null` for a
    /// parameter with a default is then `null_replaced_by_default` in
    /// lenient mode, and `type_mismatch` in strict mode, which coerces
    /// nothing.
    pub fn with_strict_definitions(mut self, strict_definitions: bool) -> Self {
        self.settings.null_is_absent = strict_definitions;
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
    pub fn state<T: Send + Sync + 'static>(&self) -> Option<crate::context::State<T>> {
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
            .map_err(|panic| RegistryError::InvalidDefinition(crate::text::panic_message(&*panic)))?;
        let name = definition.name();
        if !is_valid_tool_name(name) {
            return Err(RegistryError::InvalidName(name.to_owned()));
        }
        if self.index.contains_key(name) || self.mounted(name).is_some() {
            return Err(RegistryError::DuplicateName(name.to_owned()));
        }
        if let Some(problem) = field_problem(definition.params()) {
            return Err(RegistryError::InvalidDefinition(format!("tool `{name}`: {problem}")));
        }
        let unchecked = definition.params().fields.iter().find_map(|field| {
            let keyword = field.shape.unchecked_constraint()?;
            Some(format!(
                "tool `{name}`: the parameter `{}` ({}) has `{keyword}`, which no value of its type can be checked against",
                field.name, field.rust_type
            ))
        });
        if let Some(problem) = unchecked {
            return Err(RegistryError::InvalidDefinition(problem));
        }
        if let Some(problem) = crate::bind::default_problem(definition.params()) {
            return Err(RegistryError::InvalidDefinition(format!("tool `{name}`: {problem}")));
        }
        if let Some(missing) = definition.states().iter().find(|s| !self.states.contains(s.type_id)) {
            return Err(RegistryError::MissingState {
                tool: name.to_owned(),
                type_name: missing.type_name,
            });
        }
        self.has_sequential |= definition.is_sequential();
        self.index.insert(name.to_owned(), self.entries.len());
        self.entries.push(Entry {
            tool,
            rendered: Default::default(),
        });
        Ok(self)
    }

    /// Adds a group of tools whose set changes on its own; fails, adding
    /// nothing, when one of its current names is taken. Later clashes (a
    /// refreshed group offering a taken name) leave the group's tool out.
    #[cfg_attr(not(feature = "mcp"), allow(dead_code))]
    pub(crate) fn add_group(&mut self, group: Arc<ToolGroup>) -> Result<(), RegistryError> {
        let snapshot = group.snapshot();
        if let Some(taken) = snapshot
            .tools()
            .map(|tool| tool.definition().name())
            .find(|name| self.index.contains_key(*name) || self.mounted(name).is_some())
        {
            return Err(RegistryError::DuplicateName(taken.to_owned()));
        }
        group.report_changes_to(self.group_changes.clone());
        self.groups.push(group);
        Ok(())
    }

    /// Whether some tools' set changes on its own (a mounted server's).
    #[cfg_attr(not(feature = "mcp"), allow(dead_code))]
    pub(crate) fn has_groups(&self) -> bool {
        !self.groups.is_empty()
    }

    /// Marks a change whenever a group's set is replaced.
    #[cfg_attr(not(feature = "mcp"), allow(dead_code))]
    pub(crate) fn group_changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.group_changes.subscribe()
    }

    /// The tool of this name, registered or mounted.
    pub fn get(&self, name: &str) -> Option<Arc<dyn Tool>> {
        match self.index.get(name) {
            Some(&i) => Some(self.entries[i].tool.clone()),
            None => self.mounted(name),
        }
    }

    /// A registered tool: the calls' first look-up, which reads no group.
    #[inline]
    pub(crate) fn registered(&self, name: &str) -> Option<&dyn Tool> {
        self.index.get(name).map(|&i| &*self.entries[i].tool)
    }

    /// A mounted tool, as its group holds it now: the first group that has
    /// the name wins.
    pub(crate) fn mounted(&self, name: &str) -> Option<Arc<dyn Tool>> {
        self.groups.iter().find_map(|group| group.snapshot().get(name).cloned())
    }

    /// The names of every tool: the registered ones in registration order,
    /// then the mounted ones as [`ToolRegistry::tools`] lists them.
    pub fn names(&self) -> Vec<String> {
        self.tools().map(|tool| tool.definition().name().to_owned()).collect()
    }

    /// Every tool: the registered ones in registration order, then each
    /// mounted server's in the order it lists them (its current set: a
    /// server that announced a change is listed anew in the background).
    pub fn tools(&self) -> impl Iterator<Item = Arc<dyn Tool>> + Clone {
        let mounted: Vec<Arc<dyn Tool>> = self
            .mounted_view()
            .into_iter()
            .map(|(snapshot, i)| snapshot.tool(i).clone())
            .collect();
        self.entries.iter().map(|e| e.tool.clone()).chain(mounted)
    }

    /// How many tools there are, registered and mounted.
    pub fn len(&self) -> usize {
        self.entries.len()
            + if self.groups.is_empty() {
                0
            } else {
                self.mounted_view().len()
            }
    }

    /// No tool is registered or mounted.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The selected tools' definitions in `format`, in the order of
    /// [`ToolRegistry::tools`], for a request's `tools`. Each tool is
    /// rendered once per format and kept (a mounted tool's, until its server
    /// changes its set): listing renders nothing and copies nothing after
    /// the first time. Serialize the result into the request, or take a
    /// `Value` with [`ToolDefinitions::to_json`].
    pub fn definitions(&self, format: Format, selection: &Selection) -> ToolDefinitions<'_> {
        let mut items: Vec<Rendered<'_>> = self
            .entries
            .iter()
            .filter(|e| selection.includes(e.tool.definition()))
            .map(|e| Rendered::Borrowed(e.rendered(format)))
            .collect();
        if !self.groups.is_empty() {
            for (snapshot, i) in self.mounted_view() {
                let included = selection.includes(snapshot.tool(i).definition());
                if included {
                    items.push(Rendered::Shared(snapshot.rendered(i, format)));
                }
            }
        }
        ToolDefinitions::new(format, items)
    }

    /// The mounted tools a listing shows, as (snapshot, position) pairs: the
    /// groups in the order they were added, each in its own order. A name a
    /// registered tool or an earlier group has is left out (its calls reach
    /// that other tool) and reported once per snapshot.
    fn mounted_view(&self) -> Vec<(Arc<Snapshot>, usize)> {
        let snapshots: Vec<Arc<Snapshot>> = self.groups.iter().map(|g| g.snapshot()).collect();
        let mut view = Vec::new();
        for (g, snapshot) in snapshots.iter().enumerate() {
            let mut clashes = Vec::new();
            for (i, tool) in snapshot.tools().enumerate() {
                let name = tool.definition().name();
                if self.index.contains_key(name) || snapshots[..g].iter().any(|s| s.get(name).is_some()) {
                    clashes.push(name);
                } else {
                    view.push((snapshot.clone(), i));
                }
            }
            if !clashes.is_empty() && snapshot.first_clash() {
                tracing::warn!(
                    tools = ?clashes,
                    "mounted tools left out: another tool has the name (the registered one, or the one mounted first, is kept)"
                );
            }
        }
        view
    }

    /// Lints the tools `selection` takes, as one request would offer them:
    /// names and descriptions that make models stumble.
    pub fn lint(&self, selection: &Selection) -> Vec<LintFinding> {
        let tools: Vec<Arc<dyn Tool>> = self.tools().filter(|t| selection.includes(t.definition())).collect();
        let definitions: Vec<&ToolDefinition> = tools.iter().map(|t| t.definition()).collect();
        crate::lint::lint(&definitions)
    }

    /// The mode a tool's arguments are bound in.
    pub(crate) fn mode_for(&self, definition: &ToolDefinition) -> BindMode {
        definition.mode().unwrap_or(self.settings.mode)
    }

    /// The binder's reading of a call's arguments before any parameter is
    /// taken: the object within the size limit, every change made to it,
    /// and its report, whose warnings start with `json_string_parsed` when
    /// the object came encoded twice (in lenient mode). `Err` when the
    /// arguments are no object at all.
    pub(crate) fn normalized(
        &self,
        definition: &ToolDefinition,
        arguments: Arguments<'_>,
        null_is_absent: bool,
    ) -> Result<(Map<String, Value>, Report), CallError> {
        self.check_size(&arguments)?;
        self.normalized_within_size(definition, arguments, null_is_absent)
    }

    /// [`normalized`](Self::normalized), for arguments whose size was
    /// checked already.
    #[inline(always)]
    pub(crate) fn normalized_within_size(
        &self,
        definition: &ToolDefinition,
        arguments: Arguments<'_>,
        null_is_absent: bool,
    ) -> Result<(Map<String, Value>, Report), CallError> {
        let mode = self.mode_for(definition);
        let (mut map, decoded) = bind::argument_object(arguments, mode)?;
        let mut report = bind::normalize(definition.params(), &mut map, mode, null_is_absent);
        report.warnings.splice(0..0, decoded);
        Ok((map, report))
    }

    /// Refuses arguments over the size limit: raw text by its length, a
    /// parsed value by the length of its JSON text (estimated, and only
    /// up to the limit).
    pub(crate) fn check_size(&self, arguments: &Arguments<'_>) -> Result<(), CallError> {
        let limit = self.settings.max_argument_bytes;
        let detail = match arguments.repr() {
            Repr::Text(text) if text.len() > limit => {
                format!("the arguments are {} bytes long; the limit is {limit}", text.len())
            }
            Repr::Json(value) if bind::json_size_exceeds(value, limit) => {
                format!("the arguments are more than {limit} bytes long as JSON; the limit is {limit}")
            }
            _ => return Ok(()),
        };
        Err(CallError::new(ErrorCode::ArgumentsTooLarge, "", detail))
    }
}

/// What is wrong with a tool's parameters, or the fields of an object in
/// them, that `#[tool]` and `#[derive(ToolParam)]` refuse at compile time
/// and a tool written by hand may still have: a name twice, a name no
/// provider accepts as a property key, or an enum listing a value twice.
fn field_problem(params: &ObjectShape) -> Option<String> {
    let mut objects = vec![params];
    for field in &params.fields {
        object_shapes(&field.shape, &mut objects);
    }
    objects.into_iter().find_map(|object| {
        let mut seen = HashSet::new();
        object.fields.iter().find_map(|field| {
            let name = crate::text::clip(&field.name);
            if !is_valid_property_name(&field.name) {
                Some(format!(
                    "the field `{name}` is no property key every provider accepts (1 to 64 ASCII letters, digits, `_`, `.` or `-`)"
                ))
            } else if !seen.insert(field.name.as_str()) {
                Some(format!("two fields of one object are named `{name}`"))
            } else {
                enum_problem(&field.shape)
            }
        })
    })
}

/// A value listed twice by the enum `shape` is, or holds as its items or
/// map values: the model would be offered one choice as two, as
/// `#[derive(ToolParam)]` never offers it. Objects inside are
/// `field_problem`'s.
fn enum_problem(shape: &Shape) -> Option<String> {
    match &shape.kind {
        Kind::Enum(values) => {
            let mut seen = HashSet::new();
            values
                .iter()
                .find(|value| !seen.insert(value.as_str()))
                .map(|value| format!("an enum lists the value `{}` twice", crate::text::clip(value)))
        }
        Kind::Array { items: inner, .. } | Kind::Map { values: inner } => enum_problem(inner),
        _ => None,
    }
}

impl fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolRegistry")
            .field("tools", &self.names())
            .field("settings", &self.settings)
            .finish()
    }
}
