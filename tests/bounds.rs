//! Every answer is bounded, whatever the model sent (SPEC section 11), and
//! the wrong behaviours the hostile-input review found stay fixed.

use std::collections::BTreeMap;

use serde_json::{Value, json};
use tool_runtime::{Outcome, ToolRegistry, tool};

/// Sum a list of integers.
#[tool]
async fn sum(#[param(description = "The integers to add")] values: Vec<i64>) -> i64 {
    values.iter().sum()
}

/// Look up a note by its id.
#[tool]
async fn note(#[param(description = "The note's id")] id: u32) -> String {
    format!("note {id}")
}

/// Rename a note.
#[tool]
async fn rename_note(
    #[param(description = "The new name")] name: String,
    #[param(description = "The note's id")] id: u32,
) -> String {
    format!("note {id} is {name}")
}

fn registry() -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    registry
        .register(Sum)
        .unwrap()
        .register(Note)
        .unwrap()
        .register(RenameNote)
        .unwrap();
    registry
}

/// A JSON array of `n` copies of `item`, as text.
fn repeated(item: &str, n: usize) -> String {
    let mut text = String::from("[");
    for i in 0..n {
        if i > 0 {
            text.push(',');
        }
        text.push_str(item);
    }
    text.push(']');
    text
}

#[tokio::test]
async fn a_1_mib_argument_with_one_bad_element_repeated_gives_a_bounded_refusal() {
    let registry = registry();
    // 349,518 elements `[]`: each is a `type_mismatch`.
    let arguments = format!(r#"{{"values": {}}}"#, repeated("[]", 349_518));
    assert!(arguments.len() <= 1 << 20);
    let result = registry.call("sum", arguments).await;
    assert_eq!(result.outcome(), Outcome::InvalidArguments);
    let text = result.text();
    assert!(text.len() <= 8 * 1024, "{} bytes", text.len());
    assert!(text.contains("its arguments have 349518 problems"), "{text}");
    assert!(text.contains("- and 349498 more problems."), "{text}");
    assert_eq!(
        text.lines()
            .filter(|l| l.starts_with("- type_mismatch:values["))
            .count(),
        20
    );
    assert!(text.ends_with("Correct the arguments and call `sum` again."), "{text}");
    // The errors kept on the result are bounded too.
    assert_eq!(result.errors.len(), 100);
    assert!(result.warnings.len() <= 100);
}

#[tokio::test]
async fn unknown_keys_in_strict_mode_give_a_bounded_refusal() {
    let registry = registry().strict();
    let mut arguments = serde_json::Map::new();
    arguments.insert("id".into(), json!(1));
    for i in 0..96_333 {
        arguments.insert(format!("k{i}"), json!(0));
    }
    let result = registry.call("note", Value::Object(arguments)).await;
    let text = result.text();
    assert!(text.len() <= 8 * 1024, "{} bytes", text.len());
    assert!(text.contains("96333 problems"), "{text}");
    assert_eq!(result.errors.len(), 100);
}

#[tokio::test]
async fn a_1_mib_key_sent_twice_is_quoted_cut() {
    let registry = registry().strict().with_max_argument_bytes(8 << 20);
    let key = "k".repeat(1 << 20);
    let arguments = json!({ "id": 1, key.clone(): 1, format!("{key}2"): 2 });
    let result = registry.call("note", arguments).await;
    let text = result.text();
    assert!(text.len() <= 8 * 1024, "{} bytes", text.len());
    assert!(text.contains("characters in all"), "{text}");
    for error in &result.errors {
        assert!(error.path.len() < 200 && error.detail.len() < 1000, "{error:?}");
    }
    // A value is cut the same way.
    let value = "v".repeat(1 << 20);
    let result = registry.call("note", json!({ "id": value })).await;
    assert!(result.text().len() < 1000, "{}", result.text());
}

#[tokio::test]
async fn a_map_with_huge_keys_is_cut_in_paths() {
    /// Count the entries of a map of integers.
    #[tool]
    async fn count(#[param(description = "The entries")] entries: BTreeMap<String, u8>) -> usize {
        entries.len()
    }
    let mut registry = ToolRegistry::new();
    registry.register(Count).unwrap();
    let key = "k".repeat(1 << 20);
    let result = registry.call("count", json!({ "entries": { key: "many" } })).await;
    assert!(result.text().len() < 1000, "{}", result.text());
    assert!(result.errors[0].path.len() < 200);
}

#[tokio::test]
async fn the_size_limit_applies_to_parsed_values_too() {
    let registry = registry();
    // A parsed object past 1 MiB.
    let values: Vec<i64> = (0..300_000).collect();
    let result = registry.call("sum", json!({ "values": values })).await;
    assert_eq!(result.error_codes(), ["arguments_too_large"]);
    // Raw text held in a JSON string.
    let text = format!(r#"{{"values": {}}}"#, repeated("1", 600_000));
    assert!(text.len() > 1 << 20);
    let result = registry.call("sum", Value::String(text)).await;
    assert_eq!(result.error_codes(), ["arguments_too_large"]);
    // Within the limit, and under a smaller one, measured alike.
    let small = json!({ "values": (0..1000).collect::<Vec<i64>>() });
    assert!(!registry.call("sum", small.clone()).await.is_error);
    let exact = small.to_string().len();
    let tight = self::registry().with_max_argument_bytes(exact);
    assert!(!tight.call("sum", small.clone()).await.is_error);
    let tighter = self::registry().with_max_argument_bytes(exact - 1);
    assert_eq!(
        tighter.call("sum", small.clone()).await.error_codes(),
        ["arguments_too_large"]
    );
    assert_eq!(
        tighter.complete("sum", small).unwrap_err().code,
        tool_runtime::ErrorCode::ArgumentsTooLarge
    );
}

/// Answer with `bytes` bytes of text, fail with them, or panic with them.
#[tool]
async fn talk(
    #[param(description = "How many bytes")] bytes: usize,
    #[param(description = "ok, err or panic")] how: String,
) -> Result<String, tool_runtime::ToolError> {
    let text = "x".repeat(bytes);
    match how.as_str() {
        "ok" => Ok(text),
        "err" => Err(tool_runtime::ToolError::new(text)),
        _ => panic!("{text}"),
    }
}

#[tokio::test]
async fn output_error_and_panic_text_is_cut_at_the_output_limit() {
    let mut registry = ToolRegistry::new();
    registry.register(Talk).unwrap();
    for how in ["ok", "err", "panic"] {
        let result = registry.call("talk", json!({"bytes": 10 << 20, "how": how})).await;
        let text = result.text();
        assert!(text.len() < 100 * 1024 + 100, "{how}: {} bytes", text.len());
        assert!(text.contains("more bytes left out]"), "{how}");
    }
    let small = registry.call("talk", json!({"bytes": 1000, "how": "ok"})).await;
    assert_eq!(small.text().len(), 1000);
    let registry = {
        let mut r = ToolRegistry::new().with_max_output_bytes(Some(10));
        r.register(Talk).unwrap();
        r
    };
    let result = registry.call("talk", json!({"bytes": 25, "how": "ok"})).await;
    assert_eq!(result.text(), "xxxxxxxxxx\n[output cut here: 15 more bytes left out]");
    let registry = {
        let mut r = ToolRegistry::new().with_max_output_bytes(None);
        r.register(Talk).unwrap();
        r
    };
    let result = registry.call("talk", json!({"bytes": 200 * 1024, "how": "ok"})).await;
    assert_eq!(result.text().len(), 200 * 1024);
}

/// List `n` numbered lines.
#[tool]
async fn lines(#[param(description = "How many lines")] n: usize) -> Vec<String> {
    (0..n).map(|i| format!("line {i}")).collect()
}

#[tokio::test]
async fn a_structured_result_cut_to_the_limit_goes_to_gemini_as_the_cut_text() {
    use tool_runtime::format::gemini;
    let mut registry = ToolRegistry::new().with_max_output_bytes(Some(1000));
    registry.register(Lines).unwrap();
    let big = registry.call("lines", json!({"n": 100_000})).await;
    assert!(big.text().ends_with("more bytes left out]"), "{}", big.text().len());
    let reply = gemini::reply(&[big]).unwrap();
    let output = &reply["parts"][0]["functionResponse"]["response"]["output"];
    let text = output.as_str().expect("the cut text, not the whole list");
    assert!(text.len() < 1100 && text.ends_with("more bytes left out]"), "{text}");
    // Within the limit, Gemini reads the structured value itself.
    let small = registry.call("lines", json!({"n": 2})).await;
    let reply = gemini::reply(&[small]).unwrap();
    assert_eq!(
        reply["parts"][0]["functionResponse"]["response"]["output"],
        json!(["line 0", "line 1"])
    );
}

#[tokio::test]
async fn a_refused_call_lists_the_ignored_keys_with_the_closest_parameter() {
    let result = registry().call("note", json!({"noteId": 5})).await;
    assert_eq!(result.error_codes(), ["missing_required:id"]);
    let text = result.text();
    assert!(text.contains("These keys were ignored"), "{text}");
    assert!(text.contains("unknown_parameter:noteId"), "{text}");
    assert!(text.contains("did you mean `id`?"), "{text}");
    assert!(text.ends_with("Correct the arguments and call `note` again."), "{text}");
    // Strict mode lists the key among the problems, with the same hint.
    let result = registry().strict().call("note", json!({"noteId": 5})).await;
    assert_eq!(
        result.error_codes(),
        ["missing_required:id", "unknown_parameter:noteId"]
    );
    assert!(result.text().contains("did you mean `id`?"), "{}", result.text());
    // A parameter nearer by edits that the key does not hold (`name`) is no
    // better a guess.
    let result = registry().call("rename_note", json!({"name": "x", "noteId": 5})).await;
    assert_eq!(result.error_codes(), ["missing_required:id"]);
    assert!(result.text().contains("did you mean `id`?"), "{}", result.text());
}

#[tokio::test]
async fn the_size_of_a_parsed_value_is_its_json_length_with_escapes() {
    let registry = registry();
    // Floats written short: 200 kB of JSON is within the limit.
    let floats = json!({"values": [1], "meta": vec![0.5; 50_000]});
    assert!(floats.to_string().len() < 1 << 20);
    let result = registry.call("sum", floats).await;
    assert!(!result.is_error, "{}", result.text());
    // Characters that JSON escapes count as their escapes: 600k quotes and
    // 300k control characters are more than 1 MiB as JSON.
    for text in ["\"".repeat(600_000), "\u{1}".repeat(300_000)] {
        let value = json!({"values": [1], "note": text});
        assert!(value.to_string().len() > 1 << 20);
        let result = registry.call("sum", value).await;
        assert_eq!(result.error_codes(), ["arguments_too_large"]);
    }
}

#[tokio::test]
async fn a_list_made_from_what_was_sent_then_refused_leaves_no_warning() {
    let registry = registry();
    for (arguments, error) in [
        // A list parsed from a string, then an element refused.
        (json!({"values": "[1, \"x\"]"}), "unsupported_integer_literal:values[1]"),
        // A single value wrapped in a list, then refused as its element.
        (json!({"values": "x"}), "unsupported_integer_literal:values[0]"),
    ] {
        let result = registry.call("sum", arguments.clone()).await;
        assert_eq!(result.error_codes(), [error], "{arguments}");
        assert!(result.warnings.is_empty(), "{:?}", result.warning_codes());
        let completion = registry.complete("sum", arguments).unwrap();
        assert!(completion.warnings.is_empty(), "{:?}", completion.warnings);
        assert_eq!(completion.params[0].source, tool_runtime::ValueSource::Refused);
    }
    // Accepted, the same changes warn.
    let result = registry.call("sum", json!({"values": "[1, 2]"})).await;
    assert_eq!(result.text(), "3");
    assert_eq!(result.warning_codes(), ["json_string_parsed:values"]);
}

/// Tag items.
#[tool]
async fn tag(
    #[param(description = "The items")] ids: Vec<u32>,
    #[param(description = "The tag")] name: String,
    #[param(description = "How many at most", default = 10)] limit: u32,
) -> String {
    format!("{} {name} {limit}", ids.len())
}

#[tokio::test]
async fn ignored_keys_are_listed_however_many_values_were_coerced() {
    let mut registry = ToolRegistry::new();
    registry.register(Tag).unwrap();
    // 150 coercions fill the warnings' record; the misspelt key that
    // explains the refusal is still listed.
    let ids: Vec<String> = (0..150).map(|i| i.to_string()).collect();
    let result = registry.call("tag", json!({"ids": ids, "nme": "x"})).await;
    assert_eq!(result.error_codes(), ["missing_required:name"]);
    let text = result.text();
    assert!(text.contains("unknown_parameter:nme"), "{text}");
    assert!(text.contains("did you mean `name`?"), "{text}");
}

/// Show one page of results.
#[tool]
async fn page(
    #[param(description = "The page", min = 1, max = 10)] page: u32,
    #[param(description = "A label", max_length = 2)] label: Option<String>,
    #[param(description = "A ratio", max = 1.0)] ratio: Option<f64>,
) -> String {
    format!("{page} {label:?} {ratio:?}")
}

#[tokio::test]
async fn a_coercion_whose_result_is_refused_is_no_warning_and_completes_as_refused() {
    let mut registry = ToolRegistry::new();
    registry.register(Page).unwrap();
    let arguments = json!({"page": "500", "label": 12345, "ratio": "2.5"});
    let result = registry.call("page", arguments.clone()).await;
    assert_eq!(
        result.error_codes(),
        ["out_of_range:page", "out_of_range:label", "out_of_range:ratio"]
    );
    assert!(result.warnings.is_empty(), "{:?}", result.warning_codes());
    let completion = registry.complete("page", arguments).unwrap();
    assert!(completion.warnings.is_empty(), "{:?}", completion.warnings);
    let sources: Vec<_> = completion.params.iter().map(|r| r.source).collect();
    assert_eq!(sources, [tool_runtime::ValueSource::Refused; 3]);
    assert_eq!(completion.params[0].value, Some(json!("500")));
    assert!(completion.arguments.is_empty(), "{:?}", completion.arguments);
    // Accepted coercions still warn and count as provided.
    let completion = registry.complete("page", json!({"page": "5"})).unwrap();
    assert_eq!(completion.params[0].source, tool_runtime::ValueSource::Provided);
    assert_eq!(completion.warnings.len(), 1);
    // A null for a required parameter is refused, not provided.
    let completion = registry.complete("page", json!({"page": null})).unwrap();
    assert_eq!(completion.params[0].source, tool_runtime::ValueSource::Refused);
}

/// A row to store.
#[derive(Debug, serde::Serialize, serde::Deserialize, tool_runtime::ToolParam)]
pub struct Row {
    /// The row's key.
    pub key: String,
}

/// Store rows.
#[tool]
async fn store(#[param(description = "The rows")] rows: Vec<Row>) -> String {
    rows.iter().map(|r| r.key.as_str()).collect::<Vec<_>>().join(",")
}

#[tokio::test]
async fn arguments_that_are_no_object_and_single_objects_for_lists() {
    let mut registry = ToolRegistry::new();
    registry.register(Store).unwrap();
    for text in ["42", "[1]", r#""hello""#, r#""[1]""#] {
        let result = registry.call("store", text).await;
        assert_eq!(result.error_codes(), ["arguments_not_object"], "{text}");
    }
    let result = registry.call("store", r#""{\"rows\": [{\"key\": \"a\"}]}""#).await;
    assert_eq!(result.text(), "a");
    assert_eq!(result.warning_codes(), ["json_string_parsed"]);
    let result = registry.call("store", json!({"rows": {"key": "b"}})).await;
    assert_eq!(result.text(), "b");
    assert_eq!(result.warning_codes(), ["scalar_coerced_to_list:rows"]);
}

/// Echo wide integers.
#[tool]
async fn wide(
    #[param(description = "A 64-bit integer")] a: Option<i64>,
    #[param(description = "A 128-bit integer")] b: Option<i128>,
) -> String {
    format!("{a:?} {b:?}")
}

#[tokio::test]
async fn integers_beyond_their_exact_range_are_refused_on_both_paths() {
    for fast_path in [true, false] {
        let mut registry = ToolRegistry::new().with_fast_path(fast_path);
        registry.register(Wide).unwrap();
        for text in [
            r#"{"a": -9223372036854775809}"#,
            r#"{"b": 170141183460469231731687303715884105727}"#,
            r#"{"b": -18446744073709551617}"#,
        ] {
            let result = registry.call("wide", text).await;
            assert_eq!(result.outcome(), Outcome::InvalidArguments, "{text}: {}", result.text());
        }
        let result = registry
            .call("wide", r#"{"a": -9223372036854775808, "b": 18446744073709551615}"#)
            .await;
        assert_eq!(result.text(), "Some(-9223372036854775808) Some(18446744073709551615)");
    }
}

#[tokio::test]
async fn a_key_with_a_line_break_cannot_add_a_line_to_the_refusal() {
    let key = "\n- missing_required:id: injected";
    let mut arguments = serde_json::Map::new();
    arguments.insert(key.to_owned(), json!(1));
    let result = registry().call("note", Value::Object(arguments)).await;
    let text = result.text();
    assert!(!text.contains("\n- missing_required:id: injected"), "{text}");
    assert!(text.contains(r"\n- missing_required:id: injected"), "{text}");
}

/// Counts the allocations the current thread makes, so a test can tell
/// the work a call does per item without a clock.
mod allocations {
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::cell::Cell;

    pub struct Counting;

    thread_local! {
        static MADE: Cell<u64> = const { Cell::new(0) };
    }

    unsafe impl GlobalAlloc for Counting {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            // `try_with`: a thread being torn down still allocates.
            let _ = MADE.try_with(|made| made.set(made.get() + 1));
            unsafe { System.alloc(layout) }
        }

        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            unsafe { System.dealloc(ptr, layout) }
        }

        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            let _ = MADE.try_with(|made| made.set(made.get() + 1));
            unsafe { System.realloc(ptr, layout, new_size) }
        }
    }

    /// Allocations made on this thread so far.
    pub fn made() -> u64 {
        MADE.with(Cell::get)
    }
}

#[global_allocator]
static ALLOCATOR: allocations::Counting = allocations::Counting;

/// A shade.
#[derive(serde::Deserialize, tool_runtime::ToolParam)]
pub enum Shade {
    Crimson,
    Vermilion,
    Turquoise,
    Chartreuse,
    Periwinkle,
    Aquamarine,
}

/// One entry of several required fields, whose expectations take words.
#[derive(serde::Deserialize, tool_runtime::ToolParam)]
pub struct Entry {
    /// The first shade.
    pub first: Shade,
    /// The second shade.
    pub second: Shade,
    /// A label.
    pub label: String,
    /// A count.
    pub count: u32,
}

/// Load entries.
#[tool]
async fn load(#[param(description = "The entries")] entries: Vec<Entry>) -> usize {
    entries.len()
}

/// A list of empty objects for a list of structs is one missing field per
/// field per object: past the 100 problems recorded, each is only counted,
/// not described, so an object costs no allocation of its own however long
/// the sentence describing it would be.
#[tokio::test(flavor = "current_thread")]
async fn problems_past_those_recorded_cost_no_sentence_each() {
    let mut registry = ToolRegistry::new();
    registry.register(Load).unwrap();
    let mut made = Vec::new();
    for n in [20_000, 40_000] {
        let arguments = format!(r#"{{"entries": {}}}"#, repeated("{}", n));
        let before = allocations::made();
        let result = registry.call("load", arguments.as_str()).await;
        made.push(allocations::made() - before);
        assert_eq!(result.outcome(), Outcome::InvalidArguments);
        assert!(
            result.text().contains(&format!("{} problems", 4 * n)),
            "{}",
            result.text()
        );
    }
    let per_object = (made[1] - made[0]) / 20_000;
    // Six a sentence made each (a field whose key is missing) before.
    assert!(per_object <= 1, "{per_object} allocations per object ({made:?})");
}
