//! SPEC 8: every value the binder accepts validates against the tool's own
//! schema after binding, and every schema a tool emits validates against
//! the JSON Schema 2020-12 meta-schema. Checked with the `jsonschema` crate,
//! an implementation of the standard independent of ours.

mod common {
    pub mod probe;
    pub mod runtime;
}

use std::collections::{BTreeSet, HashMap, HashSet};

use jsonschema::Validator;
use proptest::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use tool_runtime::format::{Format, Selection};
use tool_runtime::{ToolParam, ToolRegistry, tool};

use common::probe::Probe;
use common::runtime::block_on;

/// Echo every bound argument of the kinds the probe lacks: a string with a
/// pattern and length bounds, sets, bounded lists, a small integer, a map
/// of numbers and free JSON.
#[tool]
async fn bounded(
    #[param(
        description = "A short identifier",
        pattern = "^[a-z][a-z0-9_]*$",
        min_length = 2,
        max_length = 8
    )]
    ident: String,
    #[param(description = "Tags to match", max_items = 3)] tags: Option<BTreeSet<String>>,
    #[param(description = "Line numbers to skip", default)] skip: HashSet<u32>,
    #[param(description = "Weights per field", min_items = 1, max_items = 3)] weights: Option<Vec<f64>>,
    #[param(description = "How loud", default = 3, min = 1, max = 5)] level: u8,
    #[param(description = "Scores by name")] scores: Option<HashMap<String, i64>>,
    #[param(description = "Anything at all")] extra: Option<Value>,
) -> Value {
    json!({
        "ident": ident, "tags": tags, "skip": skip, "weights": weights,
        "level": level, "scores": scores, "extra": extra,
    })
}

/// Counts of some numbers.
#[derive(Serialize, Deserialize, ToolParam)]
struct Summary {
    /// How many numbers there were.
    count: usize,
    /// Their sum.
    sum: i64,
    /// Their mean; absent for no numbers.
    mean: Option<f64>,
}

/// Sum some numbers.
#[tool]
async fn stats(#[param(description = "The numbers")] numbers: Vec<i64>) -> Summary {
    let sum = numbers.iter().sum();
    Summary {
        count: numbers.len(),
        sum,
        mean: (!numbers.is_empty()).then(|| sum as f64 / numbers.len() as f64),
    }
}

fn registry(strict: bool) -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    if strict {
        registry = registry.strict();
    }
    registry.register(Probe).unwrap();
    registry.register(Bounded).unwrap();
    registry.register(Stats).unwrap();
    registry
}

/// The validator of a tool's input schema, built as a model's client would.
fn input_validator(registry: &ToolRegistry, name: &str) -> Validator {
    let tool = registry.get(name).unwrap();
    let schema = tool.definition().input_schema();
    jsonschema::draft202012::new(schema).unwrap_or_else(|e| panic!("{name}: the input schema does not compile: {e}"))
}

/// The echo with every `null` removed where the schema does not require the
/// property: the tools echo `None` as `null`, which means "absent" (the
/// schema declares optional properties as not required, not as nullable).
/// Followed through nested objects, lists and maps by the schema.
fn nulls_as_absent(value: &mut Value, schema: &Value) {
    match value {
        Value::Object(map) => {
            let required: Vec<&str> = schema["required"]
                .as_array()
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            map.retain(|key, v| !v.is_null() || required.contains(&key.as_str()));
            for (key, v) in map.iter_mut() {
                if let Some(property) = schema["properties"].get(key) {
                    nulls_as_absent(v, property);
                } else if let Some(values) = schema.get("additionalProperties").filter(|s| s.is_object()) {
                    nulls_as_absent(v, values);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item) = schema.get("items") {
                items.iter_mut().for_each(|v| nulls_as_absent(v, item));
            }
        }
        _ => {}
    }
}

/// Validates a bound echo; `Err` lists what the schema refused.
fn validate(validator: &Validator, schema: &Value, echo: &Value) -> Result<(), String> {
    let mut echo = echo.clone();
    nulls_as_absent(&mut echo, schema);
    let errors: Vec<String> = validator
        .iter_errors(&echo)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(format!("{errors:?} for the bound arguments {echo}"))
    }
}

// ---- argument generators: valid, coercible and invalid values mixed ----

/// Any small JSON value, mostly of the wrong kind for whatever it meets.
fn junk() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        "[a-zA-Z0-9 ._-]{0,6}".prop_map(Value::from),
    ];
    leaf.prop_recursive(2, 8, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            prop::collection::btree_map("[a-z]{1,3}", inner, 0..3).prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A parameter's value. Exact arguments (what a strict registry takes):
/// `good`, or absent. Mixed ones: mostly `good`, sometimes absent, `null`,
/// or junk.
fn param(mixed: bool, good: BoxedStrategy<Value>) -> BoxedStrategy<Option<Value>> {
    if !mixed {
        return prop_oneof![6 => good.prop_map(Some), 1 => Just(None)].boxed();
    }
    prop_oneof![
        30 => good.prop_map(Some),
        4 => Just(None),
        1 => Just(Some(Value::Null)),
        1 => junk().prop_map(Some),
    ]
    .boxed()
}

/// Picks the exact strategy, or mixes it with `others` (coercible or
/// invalid forms), each weighted.
fn mix(mixed: bool, exact: BoxedStrategy<Value>, others: Vec<(u32, BoxedStrategy<Value>)>) -> BoxedStrategy<Value> {
    if !mixed {
        return exact;
    }
    let weight = others.iter().map(|(w, _)| w).sum::<u32>() * 2;
    prop::strategy::Union::new_weighted(std::iter::once((weight, exact)).chain(others).collect()).boxed()
}

fn integer_like(mixed: bool, range: std::ops::RangeInclusive<i64>) -> BoxedStrategy<Value> {
    mix(
        mixed,
        range.clone().prop_map(Value::from).boxed(),
        vec![
            (1, range.clone().prop_map(|n| Value::from(n.to_string())).boxed()),
            (1, range.clone().prop_map(|n| json!(n as f64)).boxed()),
            (1, range.prop_map(|n| json!(n as f64 + 0.5)).boxed()),
            (1, Just(json!("lots")).boxed()),
        ],
    )
}

fn number_like(mixed: bool) -> BoxedStrategy<Value> {
    mix(
        mixed,
        (-1e3..1e3f64).prop_map(Value::from).boxed(),
        vec![
            (1, Just(json!("0.5")).boxed()),
            (1, Just(json!("-2.5e3")).boxed()),
            (1, Just(json!("many")).boxed()),
        ],
    )
}

fn string_like(mixed: bool) -> BoxedStrategy<Value> {
    mix(
        mixed,
        "\\PC{0,8}".prop_map(Value::from).boxed(),
        vec![
            (1, any::<i32>().prop_map(Value::from).boxed()),
            (1, any::<bool>().prop_map(Value::from).boxed()),
        ],
    )
}

fn bool_like(mixed: bool) -> BoxedStrategy<Value> {
    mix(
        mixed,
        any::<bool>().prop_map(Value::from).boxed(),
        vec![
            (
                2,
                prop::sample::select(vec!["true", "False", "yes"])
                    .prop_map(Value::from)
                    .boxed(),
            ),
            (1, (0..=2).prop_map(Value::from).boxed()),
        ],
    )
}

/// A list: as a list, or (mixed) as one bare item or a JSON string of a list.
fn list_of(mixed: bool, item: BoxedStrategy<Value>, max: usize) -> BoxedStrategy<Value> {
    mix(
        mixed,
        prop::collection::vec(item.clone(), 0..=max)
            .prop_map(Value::Array)
            .boxed(),
        vec![
            (1, item.clone()),
            (
                1,
                prop::collection::vec(item, 0..3)
                    .prop_map(|v| Value::from(Value::Array(v).to_string()))
                    .boxed(),
            ),
        ],
    )
}

/// A map of `value`s: as an object, or (mixed) as a JSON string of one.
fn map_of(mixed: bool, value: BoxedStrategy<Value>) -> BoxedStrategy<Value> {
    let object =
        prop::collection::btree_map("[a-z]{1,3}", value, 0..3).prop_map(|m| Value::Object(m.into_iter().collect()));
    mix(
        mixed,
        object.clone().boxed(),
        vec![(1, object.prop_map(|o| Value::from(o.to_string())).boxed())],
    )
}

fn one_of(mixed: bool, exact: &[&'static str], others: &[&'static str]) -> BoxedStrategy<Value> {
    mix(
        mixed,
        prop::sample::select(exact.to_vec()).prop_map(Value::from).boxed(),
        vec![(1, prop::sample::select(others.to_vec()).prop_map(Value::from).boxed())],
    )
}

/// The key a model writes for `name`: exact, or (mixed) sometimes camelCase.
fn key(mixed: bool, name: &'static str) -> BoxedStrategy<String> {
    if !mixed {
        return Just(name.to_owned()).boxed();
    }
    prop_oneof![5 => Just(name.to_owned()), 1 => Just(camel(name))].boxed()
}

fn camel(name: &str) -> String {
    let mut out = String::new();
    let mut upper = false;
    for c in name.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// An argument object from `(name, value)` pairs; `None` leaves it out.
/// Mixed objects sometimes carry an unknown key.
fn object(mixed: bool, pairs: Vec<(&'static str, BoxedStrategy<Option<Value>>)>) -> BoxedStrategy<Map<String, Value>> {
    let fields: Vec<_> = pairs
        .into_iter()
        .map(|(name, value)| (key(mixed, name), value))
        .collect();
    let unknown = if mixed {
        prop::option::weighted(0.1, ("[a-zA-Z]{1,8}", junk())).boxed()
    } else {
        Just(None).boxed()
    };
    (fields, unknown)
        .prop_map(|(fields, unknown)| {
            let mut map: Map<String, Value> = fields.into_iter().filter_map(|(k, v)| v.map(|v| (k, v))).collect();
            if let Some((k, v)) = unknown {
                map.entry(k).or_insert(v);
            }
            map
        })
        .boxed()
}

/// Arguments for the probe: a quarter exact, the rest mixed.
fn probe_arguments() -> impl Strategy<Value = Map<String, Value>> {
    prop_oneof![1 => probe_object(false), 3 => probe_object(true)]
}

fn probe_object(mixed: bool) -> BoxedStrategy<Map<String, Value>> {
    let window = (
        integer_like(mixed, 0..=100),
        prop::option::of(integer_like(mixed, 0..=100)),
    )
        .prop_map(|(start, end)| {
            let mut window = json!({"start": start});
            if let Some(end) = end {
                window["end"] = end;
            }
            window
        })
        .boxed();
    let window = mix(
        mixed,
        window.clone(),
        vec![(1, window.prop_map(|w| Value::from(w.to_string())).boxed())],
    );
    object(
        mixed,
        vec![
            ("pattern", param(mixed, string_like(mixed))),
            ("case_sensitive", param(mixed, bool_like(mixed))),
            ("max_results", param(mixed, integer_like(mixed, 1..=10_000))),
            ("offset", param(mixed, integer_like(mixed, i64::MIN..=i64::MAX))),
            ("threshold", param(mixed, number_like(mixed))),
            ("files", param(mixed, list_of(mixed, string_like(mixed), 4))),
            (
                "mode",
                param(
                    mixed,
                    one_of(mixed, &["read", "write", "append"], &["WRITE", "Append", "delete"]),
                ),
            ),
            ("window", param(mixed, window)),
            ("labels", param(mixed, map_of(mixed, string_like(mixed)))),
        ],
    )
}

/// Arguments for the bounded tool: a quarter exact, the rest mixed.
fn bounded_arguments() -> impl Strategy<Value = Map<String, Value>> {
    prop_oneof![1 => bounded_object(false), 3 => bounded_object(true)]
}

fn bounded_object(mixed: bool) -> BoxedStrategy<Map<String, Value>> {
    // Mixed values may also break a bound (pattern, length, items, range).
    let (level, line) = if mixed { (0..=6, -1..=5) } else { (1..=5, 0..=5) };
    let ident = mix(
        mixed,
        "[a-z][a-z0-9_]{1,7}".prop_map(Value::from).boxed(),
        vec![(1, "[a-zA-Z0-9 _-]{0,12}".prop_map(Value::from).boxed())],
    );
    object(
        mixed,
        vec![
            ("ident", param(mixed, ident)),
            (
                "tags",
                param(mixed, list_of(mixed, "[a-c]{1,2}".prop_map(Value::from).boxed(), 3)),
            ),
            ("skip", param(mixed, list_of(mixed, integer_like(mixed, line), 4))),
            ("weights", param(mixed, list_of(mixed, number_like(mixed), 3))),
            ("level", param(mixed, integer_like(mixed, level))),
            ("scores", param(mixed, map_of(mixed, integer_like(mixed, -50..=50)))),
            ("extra", param(mixed, junk().boxed())),
        ],
    )
}

/// Calls `tool` with each argument object on a lenient and a strict
/// registry and validates every accepted call's echo against the tool's
/// schema. Returns how many calls each registry accepted, lenient first.
fn check_accepted(tool: &str, cases: &[Map<String, Value>]) -> Result<[usize; 2], TestCaseError> {
    let mut accepted = [0; 2];
    for (strict, accepted) in [false, true].into_iter().zip(&mut accepted) {
        let registry = registry(strict);
        let schema = registry.get(tool).unwrap().definition().input_schema().clone();
        let validator = input_validator(&registry, tool);
        for arguments in cases {
            let result = block_on(registry.call(tool, Value::Object(arguments.clone())));
            if result.is_error {
                continue;
            }
            *accepted += 1;
            let echo = result.structured_content.as_ref().expect("the tools echo JSON");
            if let Err(problem) = validate(&validator, &schema, echo) {
                return Err(TestCaseError::fail(format!(
                    "{tool} (strict: {strict}) accepted {} and bound what its schema refuses: {problem}",
                    Value::Object(arguments.clone())
                )));
            }
        }
    }
    Ok(accepted)
}

proptest! {
    // 64 cases of 4 argument objects, each called leniently and strictly:
    // about 500 calls per tool, a second or two in a debug build.
    #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn what_the_probe_accepts_validates_against_its_schema(
        cases in prop::collection::vec(probe_arguments(), 4),
    ) {
        check_accepted("probe", &cases)?;
    }

    #[test]
    fn what_the_bounded_tool_accepts_validates_against_its_schema(
        cases in prop::collection::vec(bounded_arguments(), 4),
    ) {
        check_accepted("bounded", &cases)?;
    }

    #[test]
    fn structured_results_validate_against_the_output_schema(
        numbers in prop::collection::vec(-1_000_000i64..1_000_000, 0..6),
    ) {
        let registry = registry(false);
        let schema = registry.get("stats").unwrap().definition().output_schema().unwrap().clone();
        let validator = jsonschema::draft202012::new(&schema).unwrap();
        let result = block_on(registry.call("stats", json!({"numbers": numbers})));
        prop_assert!(!result.is_error, "{}", result.text());
        let echo = result.structured_content.as_ref().unwrap();
        if let Err(problem) = validate(&validator, &schema, echo) {
            return Err(TestCaseError::fail(problem));
        }
    }
}

/// The property above is no property if nearly every call is refused: of a
/// fixed sample of generated calls, enough must be accepted.
#[test]
fn the_generators_reach_accepted_calls() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::{Config, TestRunner};

    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        proptest::test_runner::TestRng::deterministic_rng(proptest::test_runner::RngAlgorithm::ChaCha),
    );
    for (tool, strategy) in [
        ("probe", probe_arguments().boxed()),
        ("bounded", bounded_arguments().boxed()),
    ] {
        let cases: Vec<Map<String, Value>> = (0..100)
            .map(|_| strategy.new_tree(&mut runner).unwrap().current())
            .collect();
        let [lenient, strict] = check_accepted(tool, &cases).unwrap();
        eprintln!("{tool}: of 100 generated calls, {lenient} accepted leniently, {strict} strictly");
        // Strict mode refuses every coercion, so it accepts fewer.
        assert!(
            (30..=90).contains(&lenient),
            "{tool}: {lenient} of 100 accepted leniently"
        );
        assert!((10..=60).contains(&strict), "{tool}: {strict} of 100 accepted strictly");
    }
}

/// Every schema a tool emits, in every format, is a valid 2020-12 schema.
#[test]
fn every_emitted_schema_validates_against_the_meta_schema() {
    let registry = registry(false);
    let mut checked = 0;
    for tool in registry.tools() {
        let definition = tool.definition();
        let mut schemas = vec![("input_schema", definition.input_schema())];
        schemas.extend(definition.output_schema().map(|s| ("output_schema", s)));
        for (what, schema) in schemas {
            if let Err(e) = jsonschema::draft202012::meta::validate(schema) {
                panic!("{} {what} is no 2020-12 schema: {e}\n{schema:#}", definition.name());
            }
            checked += 1;
        }
    }
    // Gemini's definitions are left out: they are an OpenAPI subset (SPEC 5),
    // with `"type": "STRING"` and `nullable`, not JSON Schema.
    for &format in Format::ALL.iter().filter(|&&f| f != Format::Gemini) {
        for rendered in registry.definitions(format, &Selection::all()).iter() {
            let schemas = [
                rendered.get("input_schema"),
                rendered.pointer("/function/parameters"),
                rendered.get("parameters"),
                rendered.get("inputSchema"),
                rendered.get("outputSchema"),
            ];
            for schema in schemas.into_iter().flatten() {
                if let Err(e) = jsonschema::draft202012::meta::validate(schema) {
                    panic!("{format:?}: {} is no 2020-12 schema: {e}\n{schema:#}", rendered);
                }
                checked += 1;
            }
        }
    }
    // Three input schemas and one output schema; then each of the seven
    // formats renders three input schemas, and MCP the output schema too.
    assert_eq!(checked, 3 + 1 + 7 * 3 + 1, "schemas checked");
}

/// How urgent a job is; serde writes it in capitals.
#[derive(Clone, Copy, Serialize, Deserialize, ToolParam)]
#[serde(rename_all(deserialize = "lowercase", serialize = "UPPERCASE"))]
enum Urgency {
    Low,
    High,
    /// Written when the job's urgency was lost; never read.
    #[serde(skip_deserializing)]
    Unknown,
}

/// A job as serde writes it differently from how it reads it.
#[derive(Serialize, Deserialize, ToolParam)]
#[serde(rename_all(serialize = "camelCase"))]
struct Job {
    /// The job's name.
    job_name: String,
    /// Notes; left out when there are none.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    notes: Vec<String>,
    /// How many steps it has.
    #[serde(rename(serialize = "steps", deserialize = "step_count"))]
    count: u32,
    /// The job's size in bytes, written as text.
    #[serde(serialize_with = "as_text")]
    size: u64,
    /// A token only ever read.
    #[serde(skip_serializing)]
    token: String,
    /// When the job was stored: written, never read.
    #[serde(skip_deserializing)]
    stored_at: u64,
    /// How urgent it is.
    urgency: Urgency,
}

/// The keys of a schema's `properties`.
fn names(properties: &Value) -> BTreeSet<&str> {
    properties.as_object().unwrap().keys().map(String::as_str).collect()
}

fn as_text<S: serde::Serializer>(size: &u64, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&size.to_string())
}

/// Store a job.
#[tool]
async fn store(
    #[param(description = "The job")] job: Job,
    #[param(description = "Lose the urgency")] lose: bool,
) -> Job {
    let urgency = if lose || job.token.is_empty() {
        Urgency::Unknown
    } else {
        job.urgency
    };
    Job {
        stored_at: 1_700_000_000,
        urgency,
        ..job
    }
}

/// SPEC 4: the output schema describes what serde writes, not what it
/// reads, so a client that checks structured content against it (as MCP
/// clients do) accepts every result: names renamed only when serialized,
/// fields left out when serialized (always or sometimes), fields written
/// but never read, values written by a function and enum values renamed
/// or written only.
#[test]
fn structured_content_validates_against_the_output_schema_when_serde_writes_another_shape() {
    let mut registry = ToolRegistry::new();
    registry.register(Store).unwrap();
    let tool = registry.get("store").unwrap();
    let definition = tool.definition();
    let output = definition
        .output_schema()
        .expect("a Job result has an output schema")
        .as_value()
        .clone();
    let validator = jsonschema::draft202012::new(&output).unwrap();
    let input = definition.input_schema();

    // The input side is serde's reading.
    let job_in = &input["properties"]["job"];
    let read = names(&job_in["properties"]);
    assert_eq!(
        read,
        BTreeSet::from(["job_name", "notes", "size", "step_count", "token", "urgency"]),
        "{job_in:#}"
    );
    assert_eq!(job_in["properties"]["urgency"]["enum"], json!(["low", "high"]));

    // The output side is serde's writing.
    let written = names(&output["properties"]);
    assert_eq!(
        written,
        BTreeSet::from(["jobName", "notes", "steps", "size", "storedAt", "urgency"]),
        "{output:#}"
    );
    let required: BTreeSet<&str> = output["required"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(!required.contains("notes"), "notes may be left out: {output:#}");
    assert!(
        required.contains("steps") && required.contains("storedAt"),
        "{output:#}"
    );
    assert_eq!(
        output["properties"]["urgency"]["enum"],
        json!(["LOW", "HIGH", "UNKNOWN"])
    );
    assert_eq!(output["properties"]["steps"]["description"], "How many steps it has.");
    // Written properties keep the struct's order, as read ones do.
    let text = definition.output_schema().unwrap().to_string();
    let at = |key: &str| {
        text.find(&format!("\"{key}\":{{"))
            .unwrap_or_else(|| panic!("{key} in {text}"))
    };
    assert!(
        at("jobName") < at("notes") && at("steps") < at("size") && at("storedAt") < at("urgency"),
        "{text}"
    );

    let call = |notes: Value, lose: bool| {
        let job = json!({"job_name": "build", "notes": notes, "step_count": 3, "size": 2048,
                         "token": "t", "urgency": "high"});
        let result = block_on(registry.call("store", json!({"job": job, "lose": lose})));
        assert!(!result.is_error, "{}", result.text());
        result.structured_content.expect("structured content")
    };
    for (notes, lose) in [(json!([]), false), (json!(["first"]), true)] {
        let content = call(notes, lose);
        if let Err(e) = validator.validate(&content) {
            panic!("{content} does not fit the output schema: {e}\n{output:#}");
        }
    }
}
