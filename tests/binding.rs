//! Binding beyond the conformance cases: what the model reads on failure,
//! completion without running, bounded errors for hostile input, and
//! property tests over the probe tool.

mod common {
    pub mod probe;
    pub mod runtime;
    pub mod snapshot;
}

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use tool_runtime::{ToolRegistry, ValueSource};

use common::probe::Probe;
use common::runtime::block_on;

fn registry() -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    registry.register(Probe).unwrap();
    registry
}

#[tokio::test]
async fn the_model_reads_every_problem_with_what_was_expected() {
    let result = registry()
        .call(
            "probe",
            json!({"max_results": "lots", "mode": "delete", "files": ["a", {"b": 1}]}),
        )
        .await;
    common::snapshot::check_text("probe_error_text.txt", &(result.text() + "\n"));
    assert_eq!(result.errors.len(), 4);
}

#[test]
fn completion_fills_defaults_and_reports_what_is_missing() {
    let completion = registry()
        .complete("probe", json!({"max_results": "5", "threshold": null, "mode": "WRITE"}))
        .unwrap();
    assert!(!completion.is_ready());
    assert_eq!(completion.missing, ["pattern"]);
    assert_eq!(completion.unset, ["threshold", "window", "labels"]);
    assert!(completion.errors.is_empty(), "a missing parameter is not an error here");
    assert_eq!(
        Value::Object(completion.arguments.clone()),
        json!({"case_sensitive": true, "max_results": 5, "offset": 0, "files": [], "mode": "write"})
    );
    let rows: Vec<(&str, &str, Option<Value>, ValueSource)> = completion
        .params
        .iter()
        .map(|r| (r.name.as_str(), r.json_type, r.value.clone(), r.source))
        .collect();
    assert_eq!(
        rows,
        [
            ("pattern", "string", None, ValueSource::Missing),
            ("case_sensitive", "boolean", Some(json!(true)), ValueSource::Default),
            ("max_results", "integer", Some(json!(5)), ValueSource::Provided),
            ("offset", "integer", Some(json!(0)), ValueSource::Default),
            ("threshold", "number", None, ValueSource::Unset),
            ("files", "array", Some(json!([])), ValueSource::Default),
            ("mode", "string", Some(json!("write")), ValueSource::Provided),
            ("window", "object", None, ValueSource::Unset),
            ("labels", "object", None, ValueSource::Unset),
        ]
    );
    assert_eq!(completion.params[2].rust_type, "u32");
    let warnings: Vec<String> = completion
        .warnings
        .iter()
        .map(tool_runtime::Warning::code_path)
        .collect();
    assert_eq!(
        warnings,
        [
            "string_literal_converted_to_integer:max_results",
            "enum_case_folded:mode"
        ]
    );
}

#[test]
fn completion_reports_wrong_values_and_unknown_tools() {
    let registry = registry();
    let completion = registry
        .complete("probe", json!({"pattern": "x", "max_results": 0}))
        .unwrap();
    assert!(completion.missing.is_empty());
    assert_eq!(completion.errors[0].code_path(), "out_of_range:max_results");
    assert!(!completion.is_ready());
    let ready = registry.complete("probe", r#"{"pattern": "x"}"#).unwrap();
    assert!(ready.is_ready());
    let err = registry.complete("prbe", json!({})).unwrap_err();
    assert_eq!(err.code_path(), "unknown_tool:prbe");
    // A CallError is a std error whose message says what went wrong.
    let boxed: Box<dyn std::error::Error> = Box::new(err);
    assert!(
        boxed
            .to_string()
            .starts_with("unknown_tool:prbe: no tool is named `prbe`"),
        "{boxed}"
    );
}

#[tokio::test]
async fn hostile_input_is_a_bounded_error() {
    let registry = registry();
    let deep = "[".repeat(100_000);
    assert_eq!(registry.call("probe", deep).await.error_codes(), ["json_parse_error"]);
    let huge = format!(r#"{{"pattern": "{}"}}"#, "x".repeat(2 << 20));
    assert_eq!(
        registry.call("probe", huge).await.error_codes(),
        ["arguments_too_large"]
    );
    // Far deeper than any schema and than serde_json's parser accepts. (A
    // `serde_json::Value` is dropped recursively, so a test cannot build one
    // arbitrarily deep; the binder's own walk follows the schema's depth.)
    let nested = || (0..1_000).fold(json!("leaf"), |inner, _| json!({ "end": inner }));
    let result = registry
        .call("probe", json!({"pattern": "x", "window": nested()}))
        .await;
    assert_eq!(
        result.error_codes(),
        ["missing_required:window.start", "type_mismatch:window.end"]
    );
    let result = registry
        .call("probe", json!({"pattern": "x", "labels": {"a": nested()}}))
        .await;
    assert_eq!(result.error_codes(), ["type_mismatch:labels.a"]);
}

/// A valid probe argument object, and the object the probe must echo back.
fn valid_probe_args() -> impl Strategy<Value = (Value, Value)> {
    let window = (any::<u32>(), proptest::option::of(any::<u32>()));
    (
        ".*",
        proptest::option::of(any::<bool>()),
        proptest::option::of(1u32..=10_000),
        proptest::option::of(any::<i64>()),
        proptest::option::of(proptest::option::of(-1e12f64..1e12)),
        proptest::option::of(proptest::collection::vec(".{0,8}", 0..4)),
        proptest::option::of(prop_oneof![Just("read"), Just("write"), Just("append")]),
        proptest::option::of(window),
        proptest::option::of(proptest::collection::btree_map("[a-z]{1,5}", ".{0,5}", 0..3)),
    )
        .prop_map(|(pattern, case, max, offset, threshold, files, mode, window, labels)| {
            let mut args = Map::new();
            args.insert("pattern".into(), json!(pattern));
            let mut put = |key: &str, value: Option<Value>| {
                if let Some(v) = value {
                    args.insert(key.into(), v);
                }
            };
            put("case_sensitive", case.map(Value::from));
            put("max_results", max.map(Value::from));
            put("offset", offset.map(Value::from));
            put("threshold", threshold.map(|t| json!(t)));
            put("files", files.clone().map(|f| json!(f)));
            put("mode", mode.map(Value::from));
            let window_json = window.map(|(start, end)| match end {
                Some(end) => json!({"start": start, "end": end}),
                None => json!({"start": start}),
            });
            put("window", window_json);
            put("labels", labels.clone().map(|l| json!(l)));
            let expected = json!({
                "pattern": pattern,
                "case_sensitive": case.unwrap_or(true),
                "max_results": max.unwrap_or(100),
                "offset": offset.unwrap_or(0),
                "threshold": threshold.flatten(),
                "files": files.unwrap_or_default(),
                "mode": mode.unwrap_or("read"),
                "window": window.map(|(start, end)| json!({"start": start, "end": end})),
                "labels": labels,
            });
            (Value::Object(args), expected)
        })
}

fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(|f| json!(f)),
        ".{0,12}".prop_map(Value::from),
        Just(json!("42")),
        Just(json!("TRUE")),
        Just(json!("[1, \"a\"]")),
        Just(json!("{\"start\": \"3\"}")),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..5).prop_map(Value::from),
            proptest::collection::btree_map(
                prop_oneof![
                    Just("start".to_owned()),
                    Just("end".to_owned()),
                    Just("pattern".to_owned()),
                    Just("maxResults".to_owned()),
                    "[a-z_]{1,8}"
                ],
                inner,
                0..5
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Objects keyed by `names` (the probe's parameter names, a camelCase alias,
/// an unknown key), with values from `values`.
fn keyed_by(names: &'static [&'static str], values: impl Strategy<Value = Value>) -> impl Strategy<Value = Value> {
    proptest::collection::vec((proptest::sample::select(names), values), 0..8)
        .prop_map(|pairs| Value::Object(pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()))
}

const PROBE_KEYS: &[&str] = &[
    "pattern",
    "case_sensitive",
    "max_results",
    "maxResults",
    "offset",
    "threshold",
    "files",
    "mode",
    "window",
    "labels",
    "extra",
    "unknown",
];

/// Arguments keyed by the probe's own parameter names, with any values.
fn probe_shaped_json() -> impl Strategy<Value = Value> {
    keyed_by(PROBE_KEYS, any_json())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn valid_arguments_bind_exactly_and_without_warnings((args, expected) in valid_probe_args()) {
        let registry = registry();
        let result = block_on(registry.call("probe", args.clone()));
        prop_assert!(!result.is_error, "{}", result.text());
        prop_assert!(result.warnings.is_empty(), "{:?}", result.warning_codes());
        prop_assert_eq!(result.structured_content, Some(expected.clone()));
        // The same arguments as raw text bind the same way.
        let raw = block_on(registry.call("probe", args.to_string()));
        prop_assert_eq!(raw.structured_content, Some(expected));
    }

    #[test]
    fn no_input_panics_and_accepted_values_respect_the_schema(args in probe_shaped_json()) {
        for registry in [registry(), {
            let mut strict = ToolRegistry::new().strict();
            strict.register(Probe).unwrap();
            strict
        }] {
            let result = block_on(registry.call("probe", args.clone()));
            prop_assert!(result.outcome() != tool_runtime::Outcome::Panicked, "{}", result.text());
            if result.is_error {
                prop_assert!(!result.errors.is_empty());
                continue;
            }
            let bound = result.structured_content.expect("the probe echoes a JSON object");
            let max = bound["max_results"].as_u64().unwrap();
            prop_assert!((1..=10_000).contains(&max));
            prop_assert!(["read", "write", "append"].contains(&bound["mode"].as_str().unwrap()));
            prop_assert!(bound["pattern"].is_string());
            prop_assert!(bound["files"].as_array().unwrap().iter().all(Value::is_string));
        }
    }

    #[test]
    fn no_raw_text_panics(raw in ".{0,64}") {
        let result = block_on(registry().call("probe", raw));
        prop_assert!(result.outcome() != tool_runtime::Outcome::Panicked);
    }
}

/// The probe again, with a nested struct that refuses unknown keys, so a
/// typed parse is exact and the fast path applies.
mod fast {
    use std::collections::BTreeMap;

    use serde::{Deserialize, Serialize};
    use serde_json::json;
    use tool_runtime::{ToolParam, tool};

    pub use super::common::probe::Mode;

    /// A range of lines.
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToolParam)]
    #[serde(deny_unknown_fields)]
    pub struct Window {
        /// The first line.
        #[param(max = 1000)]
        pub start: u32,
        /// The last line.
        pub end: Option<u32>,
    }

    /// Echo every bound argument back as one JSON object.
    #[tool]
    #[allow(clippy::too_many_arguments)]
    pub async fn fast_probe(
        #[param(description = "Glob", min_length = 1, pattern = "^[^ ]*$")] pattern: String,
        #[param(description = "Case", default = true)] case_sensitive: bool,
        #[param(description = "Limit", default = 100, min = 1, max = 10000)] max_results: u32,
        #[param(description = "Offset", default = 0)] offset: i64,
        #[param(description = "Threshold", min = 0.0)] threshold: Option<f64>,
        #[param(description = "Files", default, max_items = 3)] files: Vec<String>,
        #[param(description = "Mode", default = Mode::Read)] mode: Mode,
        #[param(description = "Window")] window: Option<Window>,
        #[param(description = "Labels")] labels: Option<BTreeMap<String, String>>,
        #[param(description = "Extra")] extra: Option<serde_json::Value>,
    ) -> serde_json::Value {
        json!({
            "pattern": pattern, "case_sensitive": case_sensitive, "max_results": max_results,
            "offset": offset, "threshold": threshold, "files": files, "mode": mode,
            "window": window, "labels": labels, "extra": extra,
        })
    }
}

fn fast_probe_shaped_json() -> impl Strategy<Value = Value> {
    let value = prop_oneof![
        3 => any_json(),
        1 => Just(json!({"start": 3})),
        1 => Just(json!({"start": 3, "end": null})),
        1 => Just(json!({"start": 2000})),
        1 => Just(json!({"start": 3, "other": 1})),
        1 => Just(json!(["a", "b"])),
        1 => Just(json!(["a", "b", "c", "d"])),
        1 => Just(json!("has space")),
        1 => Just(json!("")),
        1 => Just(json!("read")),
        1 => Just(json!(-0.5)),
        1 => Just(json!(5000)),
    ];
    let pattern = prop_oneof![Just(json!("src/*")), any_json()];
    (pattern, keyed_by(PROBE_KEYS, value)).prop_map(|(pattern, mut args)| {
        if let Value::Object(map) = &mut args {
            map.entry("pattern").or_insert(pattern);
        }
        args
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, failure_persistence: None, ..ProptestConfig::default() })]

    /// The fast path is an optimization only: for any arguments, as text or
    /// as a value, leniently or strictly, the result is the full binder's.
    #[test]
    fn the_fast_path_and_the_full_binder_agree(args in fast_probe_shaped_json(), strict in any::<bool>(), as_text in any::<bool>()) {
        let make = |fast: bool| {
            let mut registry = ToolRegistry::new().with_fast_path(fast);
            if strict {
                registry = registry.strict();
            }
            registry.register(fast::FastProbe).unwrap();
            registry
        };
        let arguments = if as_text {
            tool_runtime::CallArguments::Text(args.to_string())
        } else {
            tool_runtime::CallArguments::Json(args.clone())
        };
        let with_fast = block_on(make(true).call("fast_probe", arguments.clone()));
        let without = block_on(make(false).call("fast_probe", arguments));
        prop_assert_eq!(with_fast, without);
    }
}

/// The typed parse takes the commonest coercions of a parameter's own value
/// itself (lenient mode): whatever it takes or leaves, the result, its
/// warnings in their order included, is the full binder's.
#[test]
fn coercions_agree_on_both_paths() {
    let make = |fast: bool, strict: bool| {
        let mut registry = ToolRegistry::new().with_fast_path(fast);
        if strict {
            registry = registry.strict();
        }
        registry.register(fast::FastProbe).unwrap();
        registry
    };
    let cases = [
        json!({"pattern": "a", "case_sensitive": "false"}),
        json!({"pattern": "a", "case_sensitive": " TRUE "}),
        json!({"pattern": "a", "case_sensitive": "yes"}),
        json!({"pattern": "a", "max_results": "50"}),
        json!({"pattern": "a", "max_results": " +7 "}),
        json!({"pattern": "a", "max_results": "1e3"}),
        json!({"pattern": "a", "max_results": "0"}),
        json!({"pattern": "a", "max_results": "20000"}),
        json!({"pattern": "a", "max_results": "2.5"}),
        json!({"pattern": "a", "offset": "-12"}),
        json!({"pattern": "a", "offset": "99999999999999999999"}),
        json!({"pattern": "a", "files": "x"}),
        json!({"pattern": "a", "files": "a b \"quoted\" é"}),
        json!({"pattern": "a", "files": "[\"x\", \"y\"]"}),
        json!({"pattern": "a", "files": " [oops"}),
        json!({"pattern": "a", "mode": "WRITE"}),
        json!({"pattern": "a", "window": {"start": "3"}}),
        json!({"pattern": "a", "threshold": "0.5"}),
        json!({"files": "x", "max_results": "5", "pattern": "a", "case_sensitive": "true"}),
        json!({"files": "x", "max_results": "5", "case_sensitive": "true"}),
        json!({"pattern": "a", "max_results": "5", "maxResults": 6}),
        json!({"pattern": "a", "max_results": "5", "stray": 1}),
        json!({"pattern": "a", "max_results": "5", "case_sensitive": null}),
    ];
    for args in cases {
        for strict in [false, true] {
            for as_text in [false, true] {
                let arguments = if as_text {
                    tool_runtime::CallArguments::Text(args.to_string())
                } else {
                    tool_runtime::CallArguments::Json(args.clone())
                };
                let with_fast = block_on(make(true, strict).call("fast_probe", arguments.clone()));
                let without = block_on(make(false, strict).call("fast_probe", arguments));
                assert_eq!(with_fast, without, "the two paths differ for {args} (strict: {strict})");
            }
        }
    }
}

#[test]
fn a_nested_unknown_key_is_warned_about_on_either_path() {
    // The probe's Window ignores unknown keys, which the binder must warn
    // about: the typed parse gives up on them.
    let result = agreed("probe", json!({"pattern": "*", "window": {"start": 1, "stray": 2}}));
    assert!(!result.is_error, "{}", result.text());
    assert_eq!(result.warning_codes(), ["unknown_parameter:window.stray"]);
}

#[tokio::test]
async fn the_fast_path_takes_right_arguments_and_declines_the_rest() {
    use tool_runtime::{CallScope, Tool};
    let tool = fast::FastProbe;
    let scope = CallScope::detached("fast_probe");
    let fast = |args: &str| tool.invoke_fast(&args.into(), &scope);
    for right in [
        r#"{"pattern": "a"}"#,
        r#"{"pattern": "a", "max_results": 5, "files": ["x"], "mode": "write", "window": {"start": 1}}"#,
        r#"{"threshold": null, "pattern": "a", "labels": {"k": "v"}, "extra": [1, {"b": null}]}"#,
    ] {
        let future = fast(right).unwrap_or_else(|| panic!("the fast path declined {right}"));
        let output = future.await;
        assert!(!output.is_error);
    }
    for needs_binder in [
        r#"{"pattern": "a", "max_results": "5"}"#,
        r#"{"pattern": "a", "maxResults": 5}"#,
        r#"{"pattern": "a", "case_sensitive": null}"#,
        r#"{"pattern": "a", "mode": "WRITE"}"#,
        r#"{"pattern": "a", "max_results": 0}"#,
        r#"{"pattern": "a b"}"#,
        r#"{"pattern": "a", "window": {"start": 1, "x": 2}}"#,
        r#"{"pattern": "a", "window": {"start": 1001}}"#,
        r#"{"pattern": "a", "files": ["1", "2", "3", "4"]}"#,
        r#"{"pattern": "a", "pattern": "b"}"#,
        r#"{"max_results": 5}"#,
        r#"{"pattern": "a"} trailing"#,
        "",
        "{}",
        " {\n} ",
    ] {
        assert!(fast(needs_binder).is_none(), "the fast path took {needs_binder}");
    }
}

/// Say hello.
#[tool_runtime::tool]
async fn hello(#[param(description = "Who to greet", default = "world".to_owned())] name: String) -> String {
    format!("hello, {name}")
}

/// Arguments with no keys, as models send for a tool whose parameters all
/// have defaults, take the fast path in any JSON spacing; anything more
/// than an empty object is parsed.
#[tokio::test]
async fn an_empty_object_takes_the_fast_path() {
    use tool_runtime::{CallScope, Tool};
    let scope = CallScope::detached("hello");
    for empty in ["{}", " { } ", "\t{\r\n}\n"] {
        let future = Hello.invoke_fast(&empty.into(), &scope);
        let output = future
            .unwrap_or_else(|| panic!("the fast path declined {empty:?}"))
            .await;
        assert_eq!(
            output.content,
            [tool_runtime::Content::text("hello, world")],
            "{empty:?}"
        );
    }
    for not_empty in ["{} {}", "{ , }", "{}}", "{", "}", "{ \u{a0} }", "[]"] {
        assert!(Hello.invoke_fast(&not_empty.into(), &scope).is_none(), "{not_empty:?}");
    }
    let mut registry = ToolRegistry::new();
    registry.register(Hello).unwrap();
    let result = registry.call("hello", "{ , }").await;
    assert_eq!(result.error_codes(), ["json_parse_error"]);
}

/// Records the level and message of every `tracing` event.
#[derive(Default)]
struct Recorder(std::sync::Mutex<Vec<(tracing::Level, String)>>);

impl tracing::Subscriber for Recorder {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        struct Fields(String);
        impl tracing::field::Visit for Fields {
            fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
                self.0.push_str(&format!("{}={:?} ", field.name(), value));
            }
        }
        let mut fields = Fields(String::new());
        event.record(&mut fields);
        self.0.lock().unwrap().push((*event.metadata().level(), fields.0));
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

#[test]
fn warnings_are_logged_at_warn_and_not_sent_to_the_model() {
    // A 1 MiB lenient call with 96,333 unknown keys logs one event too. (In
    // this test, not its own: `tracing`'s per-callsite interest is global,
    // and tests that set scoped subscribers on parallel threads race.)
    let mut huge = serde_json::Map::new();
    huge.insert("pattern".into(), json!("*.rs"));
    for i in 0..96_333 {
        huge.insert(format!("k{i}"), json!(0));
    }
    let recorder = std::sync::Arc::new(Recorder::default());
    let (result, huge) = tracing::subscriber::with_default(recorder.clone(), || {
        let result = block_on(registry().call("probe", json!({"pattern": 7, "maxResults": "3"})));
        let events = recorder.0.lock().unwrap().len();
        let huge = block_on(registry().call("probe", Value::Object(huge)));
        assert!(!huge.is_error, "{}", huge.text());
        (result, recorder.0.lock().unwrap().split_off(events))
    });
    let huge: Vec<&String> = huge
        .iter()
        .filter(|(l, _)| *l == tracing::Level::WARN)
        .map(|(_, f)| f)
        .collect();
    assert_eq!(huge.len(), 1, "{} events", huge.len());
    assert!(huge[0].contains("warnings=96333"), "{}", huge[0]);
    let events = recorder.0.lock().unwrap();
    let warned: Vec<&String> = events
        .iter()
        .filter(|(l, _)| *l == tracing::Level::WARN)
        .map(|(_, f)| f)
        .collect();
    // One event for the call, counting its three warnings (SPEC section 11).
    assert_eq!(warned.len(), 1, "{events:?}");
    assert!(warned[0].contains("warnings=3"), "{warned:?}");
    assert!(
        warned.iter().any(|f| f.contains("scalar_converted_to_string:pattern")),
        "{warned:?}"
    );
    assert!(
        !result.text().contains("scalar_converted"),
        "the model does not see warnings by default"
    );
    assert!(
        result
            .clone()
            .with_warnings_shown()
            .text()
            .contains("scalar_converted_to_string:pattern")
    );
}

/// Tools with the types where a typed parse and the binder could differ.
mod edge {
    use std::collections::{BTreeMap, BTreeSet};

    use serde::{Deserialize, Serialize};
    use serde_json::{Value, json};
    use tool_runtime::{ToolParam, tool};

    /// A range whose end defaults to ten.
    #[derive(Debug, Serialize, Deserialize, ToolParam)]
    #[serde(deny_unknown_fields)]
    pub struct Range {
        /// The start.
        pub start: u32,
        /// The end; ten when not given.
        #[serde(default = "ten")]
        pub end: Option<u32>,
    }

    fn ten() -> Option<u32> {
        Some(10)
    }

    /// A span whose end is none when not given.
    #[derive(Debug, Serialize, Deserialize, ToolParam)]
    pub struct Span {
        /// The start.
        pub start: u32,
        /// The end, if any.
        #[serde(default)]
        pub end: Option<u32>,
    }

    /// Echo a span.
    #[tool]
    pub async fn spans(#[param(description = "The span")] span: Span) -> Value {
        json!({"start": span.start, "end": span.end})
    }

    /// Echo values of the types where parsing is subtle.
    #[tool]
    pub async fn edges(
        #[param(description = "Any JSON value")] data: Value,
        #[param(description = "Any values", default)] items: Vec<Value>,
        #[param(description = "A ratio", min = 0.1, default = 0.5)] ratio: f32,
        #[param(description = "Scores from 1 to 10", min = 1, max = 10, max_items = 2, default)] scores: BTreeMap<
            String,
            u32,
        >,
        #[param(description = "At least two tags", min_items = 2, default = ["a".into(), "b".into()].into())]
        tags: BTreeSet<String>,
    ) -> Value {
        json!({"data": data, "items": items, "ratio": ratio, "scores": scores, "tags": tags})
    }

    /// Echo a range.
    #[tool]
    pub async fn ranges(#[param(description = "The range")] range: Range) -> Value {
        json!({"start": range.start, "end": range.end})
    }

    /// Echo a share.
    #[tool]
    pub async fn share(#[param(description = "A share", min = 0.7, max = 1.1)] share: f32) -> f32 {
        share
    }

    /// Count labels.
    #[tool]
    pub async fn labelled(
        #[param(description = "At least two labels", min_items = 2)] labels: BTreeMap<String, String>,
    ) -> usize {
        labels.len()
    }
}

fn edge_registry(fast: bool, strict: bool) -> ToolRegistry {
    let mut registry = ToolRegistry::new().with_fast_path(fast);
    if strict {
        registry = registry.strict();
    }
    registry
        .register(edge::Edges)
        .unwrap()
        .register(edge::Ranges)
        .unwrap()
        .register(edge::Spans)
        .unwrap()
        .register(edge::Labelled)
        .unwrap()
        .register(edge::Share)
        .unwrap()
        .register(Probe)
        .unwrap();
    registry
}

/// Calls with the fast path on and off, checks they agree, returns the result.
fn agreed(tool: &str, args: Value) -> tool_runtime::ToolResult {
    let with_fast = block_on(edge_registry(true, false).call(tool, args.to_string()));
    let without = block_on(edge_registry(false, false).call(tool, args.clone()));
    assert_eq!(with_fast, without, "the two paths differ for {args}");
    with_fast
}

#[test]
fn an_unknown_key_beside_a_null_default_is_still_reported() {
    let args = json!({"pattern": "x", "case_sensitive": null, "bogus": 1});
    let lenient = block_on(edge_registry(true, false).call("probe", args.clone()));
    assert_eq!(
        lenient.warning_codes(),
        ["null_replaced_by_default:case_sensitive", "unknown_parameter:bogus"]
    );
    // Strict mode coerces nothing: `null` is no boolean there.
    let strict = block_on(edge_registry(true, true).call("probe", args));
    assert_eq!(
        strict.error_codes(),
        ["type_mismatch:case_sensitive", "unknown_parameter:bogus"]
    );
}

#[test]
fn null_is_no_value_where_the_schema_forbids_it() {
    // A required parameter's `null` is refused, whatever its type.
    assert_eq!(
        agreed("edges", json!({"data": null})).error_codes(),
        ["null_not_allowed:data"]
    );
    // An item of any JSON value takes `null`, as its schema `{}` does.
    let result = agreed("edges", json!({"data": 1, "items": [1, null]}));
    assert!(!result.is_error, "{}", result.text());
    assert_eq!(result.structured_content.unwrap()["items"], json!([1, null]));
}

#[test]
fn a_defaulted_nullable_field_takes_its_default_on_either_path() {
    let result = agreed("ranges", json!({"range": {"start": 1, "end": null}}));
    assert_eq!(result.structured_content, Some(json!({"start": 1, "end": 10})));
    assert_eq!(result.warning_codes(), ["null_replaced_by_default:range.end"]);
}

#[test]
fn null_for_an_option_whose_default_is_none_is_none_without_a_warning() {
    let result = agreed("spans", json!({"span": {"start": 1, "end": null}}));
    assert!(!result.is_error, "{}", result.text());
    assert_eq!(result.structured_content, Some(json!({"start": 1, "end": null})));
    assert!(result.warnings.is_empty(), "{:?}", result.warning_codes());
}

#[test]
fn strict_mode_reads_null_for_a_defaulted_option_as_none() {
    // No coercion: `null` is a value of an `Option`, so it is kept.
    for fast in [true, false] {
        let registry = edge_registry(fast, true);
        let result = block_on(registry.call("ranges", json!({"range": {"start": 1, "end": null}})));
        assert!(!result.is_error, "{}", result.text());
        assert_eq!(result.structured_content, Some(json!({"start": 1, "end": null})));
        assert_eq!(result.warnings, []);
    }
}

#[test]
fn f32_bounds_apply_to_the_value_the_tool_gets() {
    // 0.09999999999 reaches the tool as 0.1f32, which meets `min = 0.1`.
    let rounded = agreed("edges", json!({"data": 1, "ratio": 0.09999999999}));
    assert!(!rounded.is_error, "{}", rounded.text());
    assert_eq!(
        agreed("edges", json!({"data": 1, "ratio": 0.0999})).error_codes(),
        ["out_of_range:ratio"]
    );
    assert_eq!(
        agreed("edges", json!({"data": 1, "ratio": 3.5e38})).error_codes(),
        ["out_of_range:ratio"]
    );
}

#[test]
fn an_f32_bound_takes_the_value_it_is_written_as() {
    // Neither 0.7 nor 1.1 is an f32: each rounds away from its bound's
    // f64, one down and one up, and must still fit.
    for fits in [0.7, 1.1, 0.9] {
        let result = agreed("share", json!({ "share": fits }));
        assert!(!result.is_error, "{fits}: {}", result.text());
    }
    for outside in [0.69, 1.11] {
        assert_eq!(
            agreed("share", json!({ "share": outside })).error_codes(),
            ["out_of_range:share"]
        );
    }
}

#[test]
fn bounds_on_a_map_bound_its_values_and_item_bounds_its_keys() {
    assert_eq!(
        agreed("edges", json!({"data": 1, "scores": {"a": 0, "b": 5}})).error_codes(),
        ["out_of_range:scores.a"]
    );
    assert_eq!(
        agreed("edges", json!({"data": 1, "scores": {"a": 1, "b": 2, "c": 3}})).error_codes(),
        ["out_of_range:scores"]
    );
}

#[test]
fn a_set_s_item_bounds_count_distinct_items() {
    assert_eq!(
        agreed("edges", json!({"data": 1, "tags": ["a", "a"]})).error_codes(),
        ["out_of_range:tags"]
    );
    let ok = agreed("edges", json!({"data": 1, "tags": ["a", "b", "a"]}));
    assert_eq!(ok.structured_content.unwrap()["tags"], json!(["a", "b"]));
}

#[test]
fn an_integer_too_large_for_any_type_is_out_of_range() {
    let registry = edge_registry(true, false);
    for huge in ["1e40", "12345678901234567890123456789012345678901"] {
        let result = block_on(registry.call("probe", json!({"pattern": "x", "max_results": huge})));
        assert_eq!(result.error_codes(), ["out_of_range:max_results"], "{huge}");
    }
}

#[test]
fn a_json_minus_zero_is_the_integer_zero_in_either_mode() {
    // serde_json reads `-0` as the float -0.0; it is an integer literal.
    for strict in [false, true] {
        for fast in [true, false] {
            let registry = edge_registry(fast, strict);
            let raw = block_on(registry.call("probe", r#"{"pattern": "x", "offset": -0}"#));
            let value = block_on(registry.call(
                "probe",
                serde_json::from_str::<Value>(r#"{"pattern": "x", "offset": -0}"#).unwrap(),
            ));
            for result in [raw, value] {
                assert!(!result.is_error, "{}", result.text());
                assert_eq!(result.structured_content.unwrap()["offset"], 0);
                assert_eq!(result.warnings, [], "strict: {strict}");
            }
        }
    }
}

#[test]
fn a_json_string_value_holding_an_object_is_arguments_encoded_twice() {
    // A `Value` follows the rules of the JSON it is (SPEC 4): a string
    // holding an object is parsed with a warning, any other string is no
    // object, whichever path binds it.
    for fast_path in [true, false] {
        let registry = edge_registry(fast_path, false);
        let result = block_on(registry.call("probe", Value::String(r#"{"pattern": "x"}"#.into())));
        assert!(!result.is_error, "{}", result.text());
        assert_eq!(result.warning_codes(), ["json_string_parsed"]);
        for text in ["not json", "", "[1]", "null", "5"] {
            let result = block_on(registry.call("probe", Value::String(text.into())));
            assert_eq!(result.error_codes(), ["arguments_not_object"], "{text:?}");
        }
    }
}

fn edge_args() -> impl Strategy<Value = Value> {
    let value = prop_oneof![
        3 => any_json(),
        1 => Just(json!(0.09999999999)),
        1 => Just(json!(0.1)),
        1 => Just(json!(3.4e38)),
        1 => Just(json!(3.5e38)),
        1 => Just(json!({"a": 0, "b": 11})),
        1 => Just(json!({"a": 3})),
        1 => Just(json!({"a": 3, "b": 4, "c": 5})),
        1 => Just(json!(["a", "a"])),
        1 => Just(json!(["a", "b"])),
        1 => Just(json!([1, null])),
    ];
    keyed_by(&["data", "items", "ratio", "scores", "tags", "unknown"], value)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn the_paths_agree_on_edge_types(args in edge_args(), strict in any::<bool>()) {
        let with_fast = block_on(edge_registry(true, strict).call("edges", args.to_string()));
        let without = block_on(edge_registry(false, strict).call("edges", args));
        prop_assert_eq!(with_fast, without);
    }
}

#[test]
fn under_strict_definitions_null_means_not_given_without_a_warning() {
    // A model sent strict definitions sends `null` for every optional
    // parameter it leaves unset (SPEC section 5).
    let args =
        json!({"pattern": "*.rs", "case_sensitive": null, "max_results": null, "threshold": null, "window": null});
    for fast in [true, false] {
        let mut registry = ToolRegistry::new().with_strict_definitions(true).with_fast_path(fast);
        registry.register(Probe).unwrap();
        let result = block_on(registry.call("probe", args.to_string()));
        assert!(!result.is_error, "{}", result.text());
        assert!(result.warnings.is_empty(), "{:?}", result.warning_codes());
        let bound = result.structured_content.unwrap();
        assert_eq!(bound["case_sensitive"], true);
        assert_eq!(bound["max_results"], 100);
        assert_eq!(bound["threshold"], Value::Null);
    }
    // Without the declaration, the same null is a coercion the binder reports.
    let lenient = block_on(registry().call("probe", args.to_string()));
    assert_eq!(
        lenient.warning_codes(),
        [
            "null_replaced_by_default:case_sensitive",
            "null_replaced_by_default:max_results"
        ]
    );
}

#[test]
fn a_refused_value_still_lists_the_keys_ignored_inside_it() {
    // `window` arrives as a string holding an object whose `start` is
    // misspelt: refused for the missing `start`, and the text says why.
    let result = agreed(
        "probe",
        json!({"pattern": "*.rs", "window": "{\"strat\": 3, \"end\": 4}"}),
    );
    assert_eq!(result.error_codes(), ["missing_required:window.start"]);
    assert_eq!(result.warning_codes(), ["unknown_parameter:window.strat"]);
    let text = result.text();
    assert!(text.contains("These keys were ignored"), "{text}");
    assert!(text.contains("window.strat"), "{text}");
    assert!(text.contains("`start`"), "{text}");
}

#[test]
fn a_whole_number_past_the_exact_range_is_out_of_range_in_either_mode() {
    for strict in [false, true] {
        let result = block_on(edge_registry(true, strict).call("probe", json!({"pattern": "*.rs", "offset": 1e20})));
        assert_eq!(result.error_codes(), ["out_of_range:offset"], "strict: {strict}");
    }
    // A fraction is still no integer in strict mode.
    let result = block_on(edge_registry(true, true).call("probe", json!({"pattern": "*.rs", "offset": 4.5})));
    assert_eq!(result.error_codes(), ["type_mismatch:offset"]);
}

/// A completion says what the tool would get: a coercion inside a refused
/// value made nothing that is kept, so it keeps no warning for it (a
/// refused call still says what was coerced).
#[test]
fn completion_keeps_no_warning_for_a_coercion_inside_a_refused_value() {
    let arguments = json!({"pattern": "x", "window": {"start": "7", "end": "x", "strat": 1}, "offset": "3"});
    let completion = edge_registry(true, false).complete("probe", arguments.clone()).unwrap();
    let called = block_on(edge_registry(true, false).call("probe", arguments));
    let codes: Vec<String> = called.warnings.iter().map(|w| w.code_path()).collect();
    assert!(
        codes.contains(&"string_literal_converted_to_integer:window.start".to_owned()),
        "{codes:?}"
    );
    let window = completion.params.iter().find(|row| row.name == "window").unwrap();
    assert_eq!(window.source, tool_runtime::ValueSource::Refused);
    let warnings: Vec<String> = completion.warnings.iter().map(|w| w.code_path()).collect();
    // `offset` was coerced and kept; `window.start` was coerced inside a
    // refused value; `window.strat` was ignored there.
    assert_eq!(
        warnings,
        [
            "string_literal_converted_to_integer:offset",
            "unknown_parameter:window.strat"
        ]
    );
}

/// A key sent twice counts once, on either path: the map the tool would
/// get has one label, fewer than its lower bound.
#[test]
fn a_key_sent_twice_counts_once_toward_a_map_s_lower_bound() {
    let text = r#"{"labels": {"a": "x", "a": "y"}}"#;
    for fast in [true, false] {
        let result = block_on(edge_registry(fast, false).call("labelled", text));
        assert_eq!(result.error_codes(), ["out_of_range:labels"], "fast path: {fast}");
    }
}

/// Numbers far out of range are quoted short, as the model wrote them or
/// with an exponent, never as hundreds of digits (SPEC 11).
#[test]
fn huge_numbers_are_quoted_short_and_out_of_range() {
    for ratio in [json!(-1e300), json!("1e300"), json!("1e400"), json!(5e-324)] {
        let result = agreed("edges", json!({"data": 1, "ratio": ratio}));
        assert_eq!(result.error_codes(), ["out_of_range:ratio"], "{ratio}");
        let text = result.text();
        assert!(!text.contains("0000000000"), "{text}");
    }
    // A word Rust's float parser reads is still no number.
    for word in ["inf", "NaN", "-infinity"] {
        let result = agreed("edges", json!({"data": 1, "ratio": word}));
        assert_eq!(result.error_codes(), ["type_mismatch:ratio"], "{word}");
    }
}

/// Only JSON's own whitespace makes raw text empty; another space is no
/// JSON.
#[test]
fn raw_text_of_json_whitespace_is_empty_and_other_spaces_are_not_json() {
    let registry = edge_registry(true, false);
    let empty = block_on(registry.call("probe", " \n\t\r "));
    assert_eq!(empty.error_codes(), ["missing_required:pattern"]);
    for space in ["\u{a0}", "\u{3000}", " \u{2028} "] {
        let result = block_on(registry.call("probe", space));
        assert_eq!(result.error_codes(), ["json_parse_error"], "{space:?}");
    }
}
