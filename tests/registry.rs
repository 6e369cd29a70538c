//! The registry end to end: registration, defaults, missing arguments,
//! unknown tools, tool errors, return values, state and context.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::Serialize;
use serde_json::json;
use tool_runtime::{
    ErrorCode, Outcome, RegistryError, State, Tool, ToolContext, ToolError, ToolParam, ToolRegistry, tool,
};

/// Counts how often `greet` actually ran; the test keeps a second handle.
#[derive(Clone, Default)]
struct Runs(Arc<AtomicUsize>);

impl Runs {
    fn record(&self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }

    fn count(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

/// Greet someone, counting the greetings.
#[tool]
async fn greet(
    #[param(description = "Who to greet")] name: String,
    #[param(description = "The greeting word", default = "Hello")] greeting: String,
    #[param(description = "How many exclamation marks", default = 1, max = 5)] excitement: u8,
    #[param(description = "Add a title before the name")] title: Option<String>,
    runs: State<Runs>,
) -> String {
    runs.record();
    let title = title.map(|t| format!("{t} ")).unwrap_or_default();
    format!("{greeting}, {title}{name}{}", "!".repeat(excitement as usize))
}

/// Divide two numbers.
#[tool]
fn divide(
    #[param(description = "The dividend")] a: f64,
    #[param(description = "The divisor")] b: f64,
) -> Result<f64, ToolError> {
    if b == 0.0 {
        return Err(ToolError::new("cannot divide by zero; pass a non-zero divisor"));
    }
    Ok(a / b)
}

/// A summary of some numbers.
#[derive(Serialize, serde::Deserialize, ToolParam)]
struct Stats {
    /// How many numbers there were.
    count: usize,
    /// Their sum.
    sum: i64,
}

/// Sum a list of integers.
#[tool(strict)]
async fn summarize(#[param(description = "The numbers")] numbers: Vec<i64>) -> Stats {
    Stats {
        count: numbers.len(),
        sum: numbers.iter().sum(),
    }
}

/// Report the id of the current call.
#[tool(name = "who-am-i")]
async fn whoami(ctx: ToolContext) -> String {
    format!("{} in {}", ctx.call_id(), ctx.tool_name())
}

fn registry() -> (ToolRegistry, Runs) {
    let runs = Runs::default();
    let mut registry = ToolRegistry::new().with_state(runs.clone());
    registry
        .register(Greet)
        .unwrap()
        .register(Divide)
        .unwrap()
        .register(Summarize)
        .unwrap()
        .register(Whoami)
        .unwrap();
    (registry, runs)
}

#[tokio::test]
async fn defaults_fill_absent_parameters() {
    let (registry, _) = registry();
    let result = registry.call("greet", json!({"name": "Ada"})).await;
    assert!(!result.is_error, "{}", result.text());
    assert_eq!(result.text(), "Hello, Ada!");
    assert!(result.warnings.is_empty());
    assert_eq!(result.outcome(), Outcome::Success);
    assert_eq!(
        result.structured_content, None,
        "text results carry no structured content"
    );
}

#[tokio::test]
async fn provided_values_override_defaults() {
    let (registry, _) = registry();
    let result = registry
        .call(
            "greet",
            json!({"name": "Ada", "greeting": "Hi", "excitement": 3, "title": "Dr."}),
        )
        .await;
    assert_eq!(result.text(), "Hi, Dr. Ada!!!");
}

#[tokio::test]
async fn missing_required_arguments_keep_the_tool_from_running() {
    let (registry, runs) = registry();
    let result = registry.call("greet", json!({"excitement": 9})).await;
    assert!(result.is_error);
    assert_eq!(result.outcome(), Outcome::InvalidArguments);
    assert_eq!(
        result.error_codes(),
        ["missing_required:name", "out_of_range:excitement"]
    );
    let text = result.text();
    assert!(
        text.starts_with("The tool `greet` was not run: its arguments have 2 problems."),
        "{text}"
    );
    assert!(
        text.ends_with("Correct the arguments and call `greet` again."),
        "{text}"
    );
    assert_eq!(runs.count(), 0);
}

#[tokio::test]
async fn a_refused_call_never_reaches_the_function() {
    let (registry, runs) = registry();
    for bad in [
        json!({}),
        json!({"name": {"first": "Ada"}}),
        json!({"name": "Ada", "excitement": 6}),
        json!({"name": null}),
        json!([1, 2]),
    ] {
        assert!(registry.call("greet", bad).await.is_error);
    }
    assert_eq!(runs.count(), 0);
    assert!(!registry.call("greet", json!({"name": "Ada"})).await.is_error);
    assert_eq!(runs.count(), 1);
}

#[tokio::test]
async fn unknown_tools_name_the_available_ones() {
    let (registry, _) = registry();
    let result = registry.call("great", json!({})).await;
    assert!(result.is_error);
    assert_eq!(result.outcome(), Outcome::UnknownTool);
    assert_eq!(result.errors[0].code, ErrorCode::UnknownTool);
    assert_eq!(result.error_codes(), ["unknown_tool:great"]);
    let text = result.text();
    assert!(text.contains("Did you mean `greet`?"), "{text}");
    assert!(text.contains("`greet`, `divide`, `summarize`, `who-am-i`"), "{text}");
}

#[tokio::test]
async fn an_err_becomes_an_error_result_with_its_message() {
    let (registry, _) = registry();
    let result = registry.call("divide", json!({"a": 1, "b": 0})).await;
    assert!(result.is_error);
    assert_eq!(result.outcome(), Outcome::ToolFailed);
    assert_eq!(result.text(), "cannot divide by zero; pass a non-zero divisor");
    assert!(result.errors.is_empty(), "a tool failure is not an argument error");

    let ok = registry.call("divide", json!({"a": 1, "b": 4})).await;
    assert_eq!(ok.text(), "0.25");
    assert_eq!(ok.structured_content, Some(json!(0.25)));
}

#[tokio::test]
async fn serialize_results_are_json_text_and_structured_content() {
    let (registry, _) = registry();
    let result = registry.call("summarize", json!({"numbers": [1, 2, 3]})).await;
    assert_eq!(result.text(), r#"{"count":3,"sum":6}"#);
    assert_eq!(result.structured_content, Some(json!({"count": 3, "sum": 6})));
    assert_eq!(
        Summarize.definition().output_schema().unwrap()["properties"]["sum"]["type"],
        "integer",
        "a structured return type advertises its schema"
    );
    assert!(Greet.definition().output_schema().is_none());
}

/// Sum a list of integers, returned wrapped in `Json`.
#[tool]
async fn summarize_json(
    #[param(description = "The numbers")] numbers: Vec<i64>,
) -> Result<tool_runtime::Json<Stats>, ToolError> {
    Ok(tool_runtime::Json(Stats {
        count: numbers.len(),
        sum: numbers.iter().sum(),
    }))
}

#[tokio::test]
async fn a_json_return_advertises_the_schema_of_what_it_wraps() {
    let schema = SummarizeJson.definition().output_schema().expect("an output schema");
    assert_eq!(schema, Summarize.definition().output_schema().unwrap());
    let mut registry = ToolRegistry::new();
    registry.register(SummarizeJson).unwrap();
    let result = registry.call("summarize_json", json!({"numbers": [1, 2]})).await;
    assert_eq!(result.structured_content, Some(json!({"count": 2, "sum": 3})));
}

#[tokio::test]
async fn a_strict_tool_refuses_what_lenient_mode_would_coerce() {
    let (registry, _) = registry();
    let result = registry.call("summarize", json!({"numbers": ["1", 2]})).await;
    assert_eq!(result.error_codes(), ["type_mismatch:numbers[0]"]);
    let lenient = registry.call("greet", json!({"name": "Ada", "excitement": "2"})).await;
    assert_eq!(lenient.text(), "Hello, Ada!!");
}

#[tokio::test]
async fn raw_argument_text_is_accepted() {
    let (registry, _) = registry();
    let result = registry.call("divide", r#"{"a": 9, "b": 3}"#).await;
    assert_eq!(result.text(), "3.0");
    let bad = registry.call("divide", r#"{"a": 9,"#).await;
    assert_eq!(bad.error_codes(), ["json_parse_error"]);
}

/// Arguments the caller keeps (`&str`, `&String`, `&Value`, `&CallArguments`)
/// are read in place and bind exactly as owned ones, on the fast path, on
/// the binder (which must copy to change them) and when refused; the caller
/// still has them afterwards.
#[tokio::test]
async fn borrowed_arguments_bind_as_owned_ones() {
    let (registry, runs) = registry();
    let cases = [
        json!({"name": "Ada"}),
        json!({"name": "Ada", "excitement": "3", "Title": "Dr"}),
        json!({"excitement": 9}),
        json!("{\"name\": \"Ada\"}"),
    ];
    for value in cases {
        let text = value.to_string();
        let (owned_value, owned_text) = (
            registry.call("greet", value.clone()).await,
            registry.call("greet", text.clone()).await,
        );
        let outcomes = [
            (&owned_value, registry.call("greet", &value).await),
            (
                &owned_value,
                registry
                    .call("greet", &tool_runtime::CallArguments::Json(value.clone()))
                    .await,
            ),
            (&owned_text, registry.call("greet", text.as_str()).await),
            (&owned_text, registry.call("greet", &text).await),
        ];
        for (owned, borrowed) in outcomes {
            assert_eq!(borrowed.text(), owned.text(), "{value}");
            assert_eq!(borrowed.warning_codes(), owned.warning_codes(), "{value}");
            assert_eq!(borrowed.error_codes(), owned.error_codes(), "{value}");
        }
        // Still the caller's, unchanged.
        assert_eq!(value.to_string(), text);
    }
    assert_eq!(
        runs.count(),
        3 * 6,
        "three of the four argument sets run, each six times"
    );
    let partial = json!({"name": "Ada"});
    let completion = registry.complete("greet", &partial).unwrap();
    assert_eq!(completion.arguments["greeting"], "Hello");
}

#[tokio::test]
async fn oversized_raw_arguments_are_refused() {
    let mut registry = ToolRegistry::new().with_max_argument_bytes(16);
    registry.register(Divide).unwrap();
    let result = registry.call("divide", r#"{"a": 1, "b": 2, "c": "0123456789"}"#).await;
    assert_eq!(result.error_codes(), ["arguments_too_large"]);
}

#[tokio::test]
async fn the_context_carries_the_call_id_and_tool_name() {
    let (registry, _) = registry();
    let call = tool_runtime::ToolCall::new("who-am-i", json!({})).with_id("toolu_42");
    let result = registry.call_one(call).await;
    assert_eq!(result.text(), "toolu_42 in who-am-i");
    assert_eq!(result.call_id.as_deref(), Some("toolu_42"));
    assert!(
        Whoami.definition().params().fields.is_empty(),
        "the context is not a parameter"
    );
}

#[test]
fn duplicate_names_are_an_error() {
    let mut registry = ToolRegistry::new();
    registry.register(Divide).unwrap();
    assert_eq!(
        registry.register(Divide).err(),
        Some(RegistryError::DuplicateName("divide".into()))
    );
    assert_eq!(registry.len(), 1);
}

#[test]
fn missing_state_is_an_error_at_registration() {
    let mut registry = ToolRegistry::new();
    let err = registry.register(Greet).expect_err("Runs is missing");
    assert!(
        matches!(err, RegistryError::MissingState { ref tool, type_name } if tool == "greet" && type_name.ends_with("Runs"))
    );
    assert!(err.to_string().contains("with_state"), "{err}");
    assert!(registry.is_empty());
}

#[test]
fn the_function_stays_callable_as_written() {
    assert_eq!(divide(1.0, 2.0).unwrap(), 0.5);
}

/// Look a summary up; there may be none.
#[tool]
async fn maybe_stats(#[param(description = "Whether there is one")] found: bool) -> Option<Stats> {
    found.then_some(Stats { count: 1, sum: 2 })
}

#[test]
fn an_optional_structured_result_advertises_no_output_schema() {
    // MCP wants an object schema and structured content on every success;
    // `None` would give neither.
    assert!(MaybeStats.definition().output_schema().is_none());
    assert!(Summarize.definition().output_schema().is_some());
}

/// A tree of names; it contains itself, so it has no finite inline schema.
#[derive(serde::Deserialize, ToolParam)]
struct Tree {
    /// The node's name.
    name: String,
    /// Its children.
    children: Vec<Tree>,
}

/// Count a tree's nodes.
#[tool]
async fn count_nodes(#[param(description = "The tree")] tree: Tree) -> String {
    fn count(tree: &Tree) -> usize {
        1 + tree.children.iter().map(count).sum::<usize>()
    }
    format!("{} has {} nodes", tree.name, count(&tree))
}

#[test]
fn a_recursive_parameter_type_is_an_error_at_registration() {
    let mut registry = ToolRegistry::new();
    let err = registry.register(CountNodes).expect_err("Tree contains itself");
    assert!(matches!(err, RegistryError::InvalidDefinition(_)), "{err:?}");
    assert!(err.to_string().contains("contains itself"), "{err}");
    assert!(registry.is_empty());
}

/// How urgent a task is.
#[derive(serde::Deserialize, tool_runtime::ToolParam)]
#[serde(rename_all = "lowercase")]
enum Urgency {
    /// Only when idle.
    Low,
    /// Before anything else.
    High,
}

/// File a task.
#[tool_runtime::tool]
async fn file_task(
    #[param(description = "How soon to do it")] urgency: Urgency,
    #[param(description = "Later tasks")] later: Vec<Urgency>,
) -> String {
    let _ = (urgency, later);
    String::new()
}

#[test]
fn enum_values_keep_their_meaning_under_a_parameter_description() {
    use tool_runtime::Tool;
    let schema = FileTask.definition().input_schema();
    assert_eq!(
        schema["properties"]["urgency"]["description"],
        "How soon to do it. low: Only when idle; high: Before anything else"
    );
    assert_eq!(
        schema["properties"]["later"]["items"]["description"],
        "How urgent a task is. low: Only when idle; high: Before anything else"
    );
}

/// Greet someone by a code.
#[tool]
async fn coded(
    #[param(description = "At least five letters", default = "ab".to_string(), min_length = 5)] code: String,
) -> String {
    code
}

#[test]
fn a_default_written_as_an_expression_outside_its_bounds_is_refused_at_registration() {
    // The macro judges literal defaults; an expression is judged here,
    // before a call could hand the tool a value its schema refuses.
    let error = ToolRegistry::new().register(Coded).map(|_| ()).unwrap_err();
    assert!(matches!(error, RegistryError::InvalidDefinition(_)), "{error:?}");
    let text = error.to_string();
    assert!(
        text.contains("the default of `code`") && text.contains("at least 5"),
        "{text}"
    );
}

/// Keep any value.
#[tool]
async fn keep(#[param(description = "At least one", min = 1)] data: serde_json::Value) -> serde_json::Value {
    data
}

/// A name, as an alias hides it from the macro.
type Name = String;

/// Echo a name.
#[tool]
async fn named(#[param(description = "A name", min = 3)] name: Name) -> String {
    name
}

#[test]
fn a_constraint_no_value_of_its_type_can_be_checked_against_is_refused_at_registration() {
    for (tool, text) in [
        (
            Arc::new(Keep) as Arc<dyn Tool>,
            "`data` (serde_json::Value) has `minimum`",
        ),
        (Arc::new(Named), "`name` (Name) has `minimum`"),
    ] {
        let error = ToolRegistry::new().register_arc(tool).map(|_| ()).unwrap_err();
        assert!(matches!(error, RegistryError::InvalidDefinition(_)), "{error:?}");
        assert!(error.to_string().contains(text), "{error}");
    }
}

/// Filters for a search.
#[derive(Default, Serialize, serde::Deserialize, ToolParam)]
#[serde(default)]
struct Filters {
    /// Only below this folder.
    root: Option<String>,
    /// At most this many.
    #[param(min = 1)]
    limit: Option<u32>,
}

/// Find with filters.
#[tool]
async fn find(#[param(description = "The filters", default)] filters: Filters) -> String {
    filters.root.unwrap_or_default()
}

#[test]
fn a_default_struct_whose_fields_serialize_as_null_is_registered() {
    // `Filters::default()` is `{"root": null, "limit": null}`, which serde
    // reads back: no bound is broken, so registration takes it.
    let mut registry = ToolRegistry::new();
    registry.register(Find).unwrap();
}

/// A tool written by hand, of the fields given.
struct ByHand(tool_runtime::ToolDefinition);

impl Tool for ByHand {
    fn definition(&self) -> &tool_runtime::ToolDefinition {
        &self.0
    }

    fn invoke(
        &self,
        _: tool_runtime::BoundArguments,
        _: &tool_runtime::CallScope<'_>,
    ) -> Result<tool_runtime::ToolFuture, Vec<tool_runtime::CallError>> {
        Ok(Box::pin(async { tool_runtime::ToolOutput::text("done") }))
    }
}

/// What `#[tool]` refuses at compile time, a tool written by hand is
/// refused at registration: two fields of one name (the schema's `required`
/// would repeat it, which the meta-schema refuses), or a name no provider
/// takes as a property key, at the top or in a nested object.
#[test]
fn a_hand_written_tool_with_a_repeated_or_unacceptable_field_name_is_refused() {
    use tool_runtime::schema::Field;
    let field = |name: &str| Field::new(name, String::shape(), false, "String");
    let nested = Field::new(
        "filters",
        tool_runtime::schema::Shape::new(tool_runtime::schema::Kind::Object(
            tool_runtime::schema::ObjectShape::new(vec![field("tag"), field("tag")], true),
        )),
        false,
        "Filters",
    );
    for (fields, text) in [
        (vec![field("a"), field("a")], "two fields of one object are named `a`"),
        (vec![field("filter[id]")], "the field `filter[id]` is no property key"),
        (vec![field("")], "the field `` is no property key"),
        (vec![field("ok"), nested], "two fields of one object are named `tag`"),
    ] {
        assert_refused_by_hand(fields, text);
    }
    let fine = tool_runtime::ToolDefinition::new("by_hand", "Do it by hand.", vec![field("a.b-c_9")]);
    assert!(ToolRegistry::new().register(ByHand(fine)).is_ok());
}

/// Registering a hand-written tool of `fields` is refused as an invalid
/// definition, the error saying `text`.
fn assert_refused_by_hand(fields: Vec<tool_runtime::schema::Field>, text: &str) {
    let definition = tool_runtime::ToolDefinition::new("by_hand", "Do it by hand.", fields);
    let error = ToolRegistry::new()
        .register(ByHand(definition))
        .map(|_| ())
        .unwrap_err();
    assert!(matches!(error, RegistryError::InvalidDefinition(_)), "{error:?}");
    assert!(error.to_string().contains(text), "{error}");
}

/// An enum listing one value twice, as `#[derive(ToolParam)]` never makes
/// one: refused at registration, at the top, as a list's items, or in a
/// nested object.
#[test]
fn a_hand_written_tool_with_an_enum_listing_a_value_twice_is_refused() {
    use tool_runtime::schema::{Field, Kind, ObjectShape, Shape};
    let levels = |values: &[&str]| Shape::new(Kind::Enum(values.iter().map(|v| v.to_string()).collect()));
    let field = |name: &str, shape: Shape| Field::new(name, shape, false, "Level");
    let list = Shape::new(Kind::Array {
        items: Box::new(levels(&["low", "high", "low"])),
        unique: false,
    });
    let nested = Shape::new(Kind::Object(ObjectShape::new(
        vec![field("level", levels(&["high", "high"]))],
        true,
    )));
    for (fields, text) in [
        (
            vec![field("level", levels(&["low", "high", "low"]))],
            "an enum lists the value `low` twice",
        ),
        (vec![field("levels", list)], "an enum lists the value `low` twice"),
        (vec![field("filters", nested)], "an enum lists the value `high` twice"),
    ] {
        assert_refused_by_hand(fields, text);
    }
    let fine = tool_runtime::ToolDefinition::new(
        "by_hand",
        "Do it by hand.",
        vec![field("level", levels(&["low", "Low", "high"]))],
    );
    assert!(ToolRegistry::new().register(ByHand(fine)).is_ok());
}

/// How loud to play.
#[derive(Serialize, serde::Deserialize, ToolParam)]
#[serde(rename_all = "lowercase")]
enum Volume {
    /// Quietly.
    Low,
    /// Loudly; written `H`, read `high`.
    #[serde(rename(serialize = "H"))]
    High,
}

/// Play a sound.
#[tool]
async fn play(#[param(description = "How loud", default = Volume::High)] volume: Volume) -> String {
    matches!(volume, Volume::High).to_string()
}

/// Play a sound, quietly unless told.
#[tool]
async fn play_quietly(#[param(description = "How loud", default = Volume::Low)] volume: Volume) -> String {
    matches!(volume, Volume::High).to_string()
}

#[test]
fn a_default_serialized_as_no_value_of_its_enum_is_refused_at_registration() {
    // `Volume::High` serializes as "H", which the schema's `enum`
    // (`["low", "high"]`) does not list: the model would be shown a default
    // it could never send.
    let error = ToolRegistry::new().register(Play).map(|_| ()).unwrap_err();
    assert!(matches!(error, RegistryError::InvalidDefinition(_)), "{error:?}");
    let text = error.to_string();
    assert!(text.contains("the default of `volume`"), "{text}");
    let mut registry = ToolRegistry::new();
    registry.register(PlayQuietly).unwrap();
    assert_eq!(
        PlayQuietly.definition().input_schema()["properties"]["volume"]["default"],
        "low"
    );
}

/// A user's identifier, read as the text alone.
#[derive(serde::Deserialize, ToolParam)]
#[serde(transparent)]
struct UserId(#[param(min_length = 2)] String);

/// A note's identifier, read as the text alone.
#[derive(serde::Deserialize, ToolParam)]
#[serde(transparent)]
struct NoteId {
    #[param(pattern = "^n[0-9]+$")]
    id: String,
}

/// A plain newtype, to compare with.
#[derive(serde::Deserialize, ToolParam)]
struct Plain(#[param(min_length = 2)] String);

/// Open a user's note.
#[tool]
async fn open_note(
    #[param(description = "Whose note")] user: UserId,
    #[param(description = "Which note")] note: NoteId,
    #[param(description = "For comparison")] plain: Plain,
) -> String {
    format!("{}/{}/{}", user.0, note.id, plain.0)
}

#[tokio::test]
async fn a_transparent_struct_of_one_field_is_read_and_described_as_that_field() {
    let schema = OpenNote.definition().input_schema();
    let properties = &schema["properties"];
    assert_eq!(
        properties["user"],
        json!({"type": "string", "minLength": 2, "description": "Whose note"}),
        "{schema}"
    );
    assert_eq!(
        properties["note"],
        json!({"type": "string", "pattern": "^n[0-9]+$", "description": "Which note"}),
        "{schema}"
    );
    // As a plain newtype is.
    assert_eq!(
        properties["plain"],
        json!({"type": "string", "minLength": 2, "description": "For comparison"}),
        "{schema}"
    );
    let mut registry = ToolRegistry::new();
    registry.register(OpenNote).unwrap();
    let opened = registry
        .call("open_note", json!({"user": "u1", "note": "n7", "plain": "p1"}))
        .await;
    assert!(!opened.is_error, "{opened:?}");
    assert_eq!(opened.text(), "u1/n7/p1");
    let refused = registry
        .call("open_note", json!({"user": "u", "note": "x7", "plain": "p1"}))
        .await;
    assert!(refused.is_error, "{refused:?}");
    let codes: Vec<String> = refused.errors.iter().map(|e| e.to_string()).collect();
    assert!(codes.iter().any(|c| c.starts_with("out_of_range:user")), "{codes:?}");
    assert!(
        codes.iter().any(|c| c.starts_with("pattern_mismatch:note")),
        "{codes:?}"
    );
}

/// A unit of length; it reads, but does not serialize.
#[derive(serde::Deserialize, ToolParam)]
#[serde(rename_all = "lowercase")]
enum Unit {
    Metres,
    Feet,
    #[serde(skip)]
    #[allow(dead_code)]
    Cubits,
}

/// A distance in feet unless told, shown in metres unless told.
#[derive(serde::Deserialize, ToolParam)]
struct Shown {
    /// The unit shown.
    #[serde(default = "metres")]
    unit: Unit,
}

fn metres() -> Unit {
    Unit::Metres
}

/// Convert a distance.
#[tool]
async fn convert(
    #[param(description = "The distance")] distance: f64,
    #[param(description = "Its unit", default = Unit::Feet)] from: Unit,
    #[param(description = "A unit serde never reads", default = Unit::Cubits)] odd: Unit,
    #[param(description = "How to show it", default = Shown { unit: Unit::Metres })] shown: Shown,
) -> String {
    let feet = matches!(from, Unit::Feet);
    let _ = (odd, shown.unit);
    format!("{distance} {}", if feet { "ft" } else { "m" })
}

/// A derived enum's default is shown in the schema, and filled in by
/// `complete`, as the value the model sends for it, though the enum does
/// not serialize; a variant serde never reads has no such value and is
/// shown nowhere.
#[tokio::test]
async fn a_derived_enum_s_default_is_shown_without_serialize() {
    let mut registry = ToolRegistry::new();
    registry.register(Convert).unwrap();
    let schema = Convert.definition().input_schema().clone();
    let properties = &schema["properties"];
    assert_eq!(properties["from"]["default"], "feet", "{schema}");
    assert!(properties["odd"].get("default").is_none(), "{schema}");
    assert_eq!(
        properties["shown"]["properties"]["unit"]["default"], "metres",
        "{schema}"
    );
    let completion = registry.complete("convert", json!({"distance": 3})).unwrap();
    assert_eq!(completion.arguments["from"], "feet");
    assert_eq!(registry.call("convert", json!({"distance": 3})).await.text(), "3 ft");
}
