//! Provider formats: definitions in every format (snapshotted), each
//! provider's calls in and results out, subsets, and the lint.

mod common {
    pub mod probe;
    pub mod snapshot;
}

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tool_runtime::LintRule;
use tool_runtime::format::{Format, FormatErrorKind, Selection, anthropic, gemini, mcp, openai};
use tool_runtime::{Content, ToolError, ToolParam, ToolRegistry, tool};

use common::probe::Probe;

/// Render a chart of the given values as a PNG image.
#[tool(tags = ["charts"], read_only = true)]
async fn render_chart(#[param(description = "The values to plot, one bar each")] values: Vec<f64>) -> Vec<Content> {
    vec![
        Content::text(format!("A bar chart of {} values.", values.len())),
        Content::image(b"\x89PNG\r\n\x1a\n", "image/png"),
    ]
}

/// Produce the monthly report as a PDF document.
#[tool(tags = ["reports"])]
async fn export_report(
    #[param(description = "The month, as YYYY-MM", pattern = "^[0-9]{4}-[0-9]{2}$")] month: String,
) -> Content {
    Content::document(
        b"%PDF-1.4 report",
        "application/pdf",
        Some(format!("report-{month}.pdf")),
    )
}

/// Fail on purpose, to show how errors travel to the model.
#[tool(tags = ["reports"])]
async fn fail_loudly(#[param(description = "What to complain about")] reason: String) -> Result<String, ToolError> {
    Err(ToolError::new(format!("refused: {reason}")))
}

/// What to serve in a meeting.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, ToolParam)]
#[serde(rename_all = "lowercase")]
enum Food {
    /// Coffee and tea.
    Coffee,
    /// A light lunch.
    Lunch,
}

/// Catering for a meeting.
#[derive(Debug, Serialize, Deserialize, ToolParam)]
#[serde(deny_unknown_fields)]
struct Catering {
    /// What to serve.
    food: Food,
    /// For how many people; everyone invited when absent.
    #[param(min = 1)]
    headcount: Option<u32>,
}

/// Book a meeting room for today.
///
/// Use it when the user asks for a room; returns the booking's reference.
#[tool(tags = ["calendar"])]
async fn book_room(
    #[param(description = "The room's name", min_length = 1)] room: String,
    #[param(description = "Start time, as HH:MM", pattern = "^[0-2][0-9]:[0-5][0-9]$")] start: String,
    #[param(description = "Length in minutes", default = 30, min = 15, max = 240)] minutes: u32,
    #[param(description = "Who is invited", default, max_items = 20)] attendees: Vec<String>,
    #[param(description = "Add a video link")] video: Option<bool>,
    #[param(description = "Catering to order")] catering: Option<Catering>,
) -> String {
    let _ = (&attendees, video, &catering);
    format!("{room} at {start} for {minutes} min")
}

fn registry() -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    registry
        .register(Probe)
        .and_then(|r| r.register(RenderChart))
        .and_then(|r| r.register(ExportReport))
        .and_then(|r| r.register(FailLoudly))
        .and_then(|r| r.register(BookRoom))
        .unwrap();
    registry
}

/// Snapshots `tool`'s definition in every format, as `<tool>_<format>.json`.
fn snapshot_every_format(tool: &str) {
    let registry = registry();
    let only = Selection::all().allow([tool]);
    for format in Format::ALL {
        let name = format!("{tool}_{}", format!("{format:?}").to_lowercase());
        common::snapshot::check_json(&name, &registry.definitions(*format, &only));
    }
}

#[test]
fn probe_definitions_in_every_format() {
    snapshot_every_format("probe");
}

#[test]
fn strict_variants_fall_back_for_what_strict_mode_cannot_express() {
    let registry = registry();
    let strict = registry.definitions(Format::OpenAiChatStrict, &Selection::all());
    let by_name = |name: &str| strict.iter().find(|d| d["function"]["name"] == name).unwrap();
    // The probe's `labels` is a free-form map: strict mode demands
    // `additionalProperties: false`, so the probe keeps its plain definition.
    assert!(by_name("probe")["function"].get("strict").is_none());
    assert_eq!(by_name("render_chart")["function"]["strict"], true);
    let responses = registry.definitions(Format::OpenAiResponsesStrict, &Selection::all());
    assert_eq!(responses[0]["strict"], false);
    assert_eq!(responses[1]["strict"], true);
    let anthropic = registry.definitions(Format::AnthropicStrict, &Selection::all());
    assert!(anthropic[0].get("strict").is_none());
    assert_eq!(anthropic[1]["strict"], true);
}

#[test]
fn a_strict_expressible_tool_in_every_format() {
    snapshot_every_format("book_room");
}

#[test]
fn definitions_are_rendered_once_and_kept() {
    let registry = registry();
    let only_probe = Selection::all().allow(["probe"]);
    // Both listings held at once, so a second rendering could not reuse
    // the first one's freed memory.
    let first = registry.definitions(Format::OpenAiChatStrict, &only_probe);
    let second = registry.definitions(Format::OpenAiChatStrict, &only_probe);
    assert!(
        std::ptr::eq(&first[0], &second[0]),
        "the second request reuses the first rendering"
    );
}

#[test]
fn subsets_by_name_tag_and_denial() {
    let registry = registry();
    let names = |selection: &Selection| -> Vec<String> {
        registry
            .definitions(Format::Anthropic, selection)
            .iter()
            .map(|d| d["name"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(names(&Selection::all()).len(), 5);
    assert_eq!(
        names(&Selection::all().with_tags(["reports"])),
        ["export_report", "fail_loudly"]
    );
    assert_eq!(
        names(&Selection::all().with_tags(["reports"]).allow(["probe"])),
        ["probe", "export_report", "fail_loudly"]
    );
    assert_eq!(
        names(&Selection::all().deny(["probe", "fail_loudly"])),
        ["render_chart", "export_report", "book_room"]
    );
    assert_eq!(
        names(&Selection::all().with_tags(["reports"]).deny(["fail_loudly"])),
        ["export_report"]
    );
    let gemini = registry.definitions(Format::Gemini, &Selection::all().allow(["render_chart"]));
    assert_eq!(gemini[0]["name"], "render_chart");
    assert_eq!(
        serde_json::to_value(&gemini).unwrap(),
        gemini.to_json(),
        "what serializes is what to_json gives"
    );
    assert_eq!(gemini.to_json()["functionDeclarations"][0]["name"], "render_chart");
}

#[tokio::test]
async fn anthropic_round_trip_keeps_order_and_puts_notices_last() {
    let registry = registry();
    let assistant = json!({"role": "assistant", "content": [
        {"type": "text", "text": "On it."},
        {"type": "tool_use", "id": "toolu_b", "name": "fail_loudly", "input": {"reason": "no data"}},
        {"type": "tool_use", "id": "toolu_a", "name": "render_chart", "input": {"values": "[1, 2.5]"}},
        {"type": "tool_use", "id": "toolu_c", "name": "export_report", "input": {"month": "2026-11"}},
    ]});
    let calls = anthropic::tool_calls(&assistant).unwrap();
    // call_all returns the results in the order of the tool_use blocks,
    // and the reply keeps that order.
    let results = registry.call_all(calls).await;
    let reply = anthropic::reply_with_notice(&results, "2 of 5 tool calls left").unwrap();
    assert_eq!(reply["role"], "user");
    let content = reply["content"].as_array().unwrap();
    let ids: Vec<&str> = content.iter().filter_map(|b| b["tool_use_id"].as_str()).collect();
    assert_eq!(ids, ["toolu_b", "toolu_a", "toolu_c"]);
    assert_eq!(content[0]["is_error"], true);
    assert_eq!(content[0]["content"][0]["text"], "refused: no data");
    assert_eq!(content[1]["content"][1]["type"], "image");
    assert_eq!(content[1]["content"][1]["source"]["media_type"], "image/png");
    assert_eq!(content[2]["content"][0]["type"], "document");
    assert_eq!(content[2]["content"][0]["title"], "report-2026-11.pdf");
    assert_eq!(content[3], json!({"type": "text", "text": "2 of 5 tool calls left"}));
    // The API refuses an empty text block: a blank notice is left out.
    let reply = anthropic::reply_with_notice(&results, " \n").unwrap();
    assert_eq!(reply["content"].as_array().unwrap().len(), 3);
}

#[tokio::test]
async fn results_that_cannot_answer_their_calls_are_a_clear_error() {
    let registry = registry();
    let call = tool_runtime::ToolCall::new("fail_loudly", json!({"reason": "y"})).with_id("toolu_9");
    let twice = registry.call_all([call.clone(), call]).await;
    let err = anthropic::reply(&twice).unwrap_err();
    assert!(err.to_string().contains("toolu_9"), "{err}");
    assert_eq!(err.kind(), FormatErrorKind::DuplicateId);
    let without_id = registry.call("fail_loudly", json!({"reason": "y"})).await;
    let err = openai::chat_reply(&[without_id]).unwrap_err();
    assert_eq!(err.kind(), FormatErrorKind::MissingId);
    assert!(err.to_string().contains("fail_loudly"), "{err}");
}

#[test]
fn a_call_without_an_id_is_missing_id_and_one_without_a_name_malformed() {
    type Parse = fn(&serde_json::Value) -> Result<Vec<tool_runtime::ToolCall>, tool_runtime::format::FormatError>;
    // Each parser, with a message of one call made from (id, name).
    type Message = fn(serde_json::Value, serde_json::Value) -> serde_json::Value;
    let parsers: [(&str, Parse, Message); 3] = [
        (
            "anthropic",
            anthropic::tool_calls,
            |id, name| json!({"role": "assistant", "content": [{"type": "tool_use", "id": id, "name": name, "input": {}}]}),
        ),
        (
            "openai chat",
            openai::chat_tool_calls,
            |id, name| json!({"role": "assistant", "tool_calls": [{"id": id, "type": "function", "function": {"name": name, "arguments": "{}"}}]}),
        ),
        (
            "openai responses",
            openai::responses_tool_calls,
            |id, name| json!({"output": [{"type": "function_call", "call_id": id, "name": name, "arguments": "{}"}]}),
        ),
    ];
    for (format, parse, message) in parsers {
        let kind = |id, name| parse(&message(id, name)).map(|calls| calls.len()).map_err(|e| e.kind());
        assert_eq!(kind(json!("c1"), json!("probe")), Ok(1), "{format}");
        for id in [json!(null), json!("")] {
            assert_eq!(kind(id, json!("probe")), Err(FormatErrorKind::MissingId), "{format}");
        }
        assert_eq!(
            kind(json!(7), json!("probe")),
            Err(FormatErrorKind::Malformed),
            "{format}"
        );
        for name in [json!(null), json!(""), json!(3)] {
            assert_eq!(kind(json!("c1"), name), Err(FormatErrorKind::Malformed), "{format}");
        }
    }
    // A key left out altogether reads as `null`.
    let without = json!({"role": "assistant", "content": [{"type": "tool_use", "name": "probe", "input": {}}]});
    assert_eq!(
        anthropic::tool_calls(&without).unwrap_err().kind(),
        FormatErrorKind::MissingId
    );
}

#[tokio::test]
async fn openai_chat_round_trip_parses_string_arguments() {
    let registry = registry();
    let completion = json!({"choices": [{"message": {"role": "assistant", "content": null, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "probe", "arguments": "{\"pattern\": \"*.rs\", \"max_results\": \"7\"}"}},
        {"id": "call_2", "type": "function", "function": {"name": "probe", "arguments": "{not json"}},
    ]}}]});
    let calls = openai::chat_tool_calls(&completion).unwrap();
    let results = registry.call_all(calls).await;
    assert_eq!(results[0].structured_content.as_ref().unwrap()["max_results"], 7);
    assert_eq!(results[1].error_codes(), ["json_parse_error"]);
    let messages = openai::chat_reply(&results).unwrap();
    assert_eq!(messages[0]["role"], "tool");
    assert_eq!(messages[0]["tool_call_id"], "call_1");
    assert_eq!(messages[1]["tool_call_id"], "call_2");
    assert!(messages[1]["content"].as_str().unwrap().contains("json_parse_error"));
}

#[test]
fn a_legacy_function_call_is_an_error_never_no_calls() {
    let message = json!({"role": "assistant", "content": null,
        "function_call": {"name": "probe", "arguments": "{\"pattern\": \"*.rs\"}"}});
    let completion = json!({"choices": [{"message": message, "finish_reason": "function_call"}]});
    for parsed in [&message, &completion] {
        let error = openai::chat_tool_calls(parsed).unwrap_err();
        assert_eq!(error.kind(), FormatErrorKind::Malformed, "{error}");
        let text = error.to_string();
        assert!(text.contains("deprecated `function_call`"), "{text}");
        assert!(text.contains("`tools`") && text.contains("`tool_calls`"), "{text}");
    }
    // A `null` one, as some servers send beside `tool_calls`, is no call.
    let calls = openai::chat_tool_calls(&json!({"function_call": null, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "probe", "arguments": "{}"}},
    ]}))
    .unwrap();
    assert_eq!(calls.len(), 1);
}

#[tokio::test]
async fn openai_chat_tool_messages_describe_images_they_cannot_carry() {
    let registry = registry();
    let result = registry
        .call_one(tool_runtime::ToolCall::new("render_chart", json!({"values": [1]})).with_id("call_1"))
        .await;
    let messages = openai::chat_reply(&[result]).unwrap();
    assert_eq!(
        messages[0]["content"],
        "A bar chart of 1 values.\n[an image (image/png) that this format cannot show]"
    );
}

#[tokio::test]
async fn openai_responses_round_trip() {
    let registry = registry();
    let response = json!({"output": [
        {"type": "function_call", "id": "fc_1", "call_id": "call_a", "name": "render_chart", "arguments": "{\"values\": [3]}"},
        {"type": "function_call", "id": "fc_2", "call_id": "call_b", "name": "fail_loudly", "arguments": "{\"reason\": \"z\"}"},
    ]});
    let results = registry
        .call_all(openai::responses_tool_calls(&response).unwrap())
        .await;
    let items = openai::responses_reply(&results).unwrap();
    assert_eq!(items[0]["type"], "function_call_output");
    assert_eq!(items[0]["call_id"], "call_a");
    assert_eq!(items[0]["output"][1]["type"], "input_image");
    assert!(
        items[0]["output"][1]["image_url"]
            .as_str()
            .unwrap()
            .starts_with("data:image/png;base64,")
    );
    // No flag says it failed: its text does.
    assert_eq!(items[1]["output"], "Error: refused: z");
}

/// Draw a chart, and fail half-way: the failure keeps the partial chart.
#[tool]
async fn draw_partly() -> tool_runtime::ToolOutput {
    let mut output = tool_runtime::ToolOutput::error("the plotter jammed");
    output.content.push(Content::image(b"\x89PNG\r\n\x1a\n", "image/png"));
    output.content.push(Content::image(b"", "image/png"));
    output
}

/// A failure holding an image reaches each provider in a shape it takes
/// (Anthropic refuses a failed result of anything but text, and any empty
/// image; Gemini any part beside the results), and reads as a failure
/// where no flag can say so (OpenAI).
#[tokio::test]
async fn a_failure_with_an_image_reads_as_one_every_provider_takes() {
    let mut registry = ToolRegistry::new();
    registry.register(DrawPartly).unwrap();
    let call = tool_runtime::ToolCall::new("draw_partly", json!({})).with_id("call_1");
    let results = [registry.call_one(call).await];
    assert!(results[0].is_error);
    let reply = anthropic::reply(&results).unwrap();
    assert_eq!(reply["content"][0]["is_error"], true);
    assert_eq!(
        reply["content"][0]["content"],
        json!([
            {"type": "text", "text": "the plotter jammed"},
            {"type": "text", "text": "[an image (image/png) that this format cannot show]"},
            {"type": "text", "text": "[an image (image/png) with no data]"},
        ])
    );
    let messages = openai::chat_reply(&results).unwrap();
    assert_eq!(
        messages[0]["content"],
        "Error: the plotter jammed\n[an image (image/png) that this format cannot show]\n\
         [an image (image/png) with no data]"
    );
    let items = openai::responses_reply(&results).unwrap();
    let output = items[0]["output"].as_array().unwrap();
    assert_eq!(
        output[0],
        json!({"type": "input_text", "text": "Error: the plotter jammed"})
    );
    assert_eq!(output[1]["type"], "input_image");
    assert_eq!(
        output[2],
        json!({"type": "input_text", "text": "[an image (image/png) with no data]"})
    );
    let content = gemini::reply(&results).unwrap();
    assert_eq!(content["parts"].as_array().unwrap().len(), 1, "{content}");
    assert_eq!(
        content["parts"][0]["functionResponse"]["response"]["error"],
        "the plotter jammed\n[an image (image/png) that this format cannot show]\n\
         [an image (image/png) with no data]"
    );
}

#[tokio::test]
async fn gemini_round_trip() {
    let registry = registry();
    let response = json!({"candidates": [{"content": {"role": "model", "parts": [
        {"functionCall": {"name": "probe", "args": {"pattern": "src/**"}}},
        {"functionCall": {"name": "fail_loudly", "args": {"reason": "q"}}},
    ]}}]});
    let results = registry.call_all(gemini::tool_calls(&response).unwrap()).await;
    let content = gemini::reply(&results).unwrap();
    let parts = content["parts"].as_array().unwrap();
    assert_eq!(parts[0]["functionResponse"]["name"], "probe");
    assert_eq!(parts[0]["functionResponse"]["response"]["output"]["pattern"], "src/**");
    assert_eq!(parts[1]["functionResponse"]["response"]["error"], "refused: q");
    assert_eq!(parts.len(), 2, "one part per call, no other: {content}");
    assert!(
        parts[0]["functionResponse"].get("id").is_none(),
        "no id was sent, none is returned"
    );
    // Ids are optional, but two results must not answer one.
    let call = tool_runtime::ToolCall::new("fail_loudly", json!({"reason": "y"})).with_id("c1");
    let twice = registry.call_all([call.clone(), call]).await;
    assert_eq!(gemini::reply(&twice).unwrap_err().kind(), FormatErrorKind::DuplicateId);
}

#[tokio::test]
async fn mcp_round_trip() {
    let registry = registry();
    let call = mcp::tool_call(&json!({"name": "probe", "arguments": {"pattern": "a"}})).unwrap();
    let result = mcp::reply(&registry.call_one(call).await);
    assert_eq!(result["isError"], false);
    assert_eq!(result["structuredContent"]["pattern"], "a");
    let image = registry.call("render_chart", json!({"values": []})).await;
    let result = mcp::reply(&image);
    assert_eq!(
        result["content"][1],
        json!({"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"})
    );
    let definitions = registry.definitions(Format::Mcp, &Selection::all().allow(["render_chart"]));
    assert_eq!(definitions[0]["annotations"], json!({"readOnlyHint": true}));
}

#[tokio::test]
async fn null_sent_for_optional_parameters_under_a_strict_schema_means_absent() {
    // A strict schema makes every property required and optional ones
    // nullable, so the model sends null for what it leaves unset.
    let registry = registry();
    // Strict binding coerces nothing, so it is told the model reads
    // strict definitions: their `null` is absence, no coercion.
    let mut strict = ToolRegistry::new().strict().with_strict_definitions(true);
    strict.register(Probe).unwrap();
    let args = json!({
        "pattern": "x", "case_sensitive": null, "max_results": null, "offset": null, "threshold": null,
        "files": null, "mode": null, "window": {"start": 1, "end": null}, "labels": null
    });
    for registry in [&registry, &strict] {
        let result = registry.call("probe", args.clone()).await;
        assert!(!result.is_error, "{}", result.text());
        assert_eq!(
            result.structured_content.unwrap(),
            json!({"pattern": "x", "case_sensitive": true, "max_results": 100, "offset": 0, "threshold": null,
                   "files": [], "mode": "read", "window": {"start": 1, "end": null}, "labels": null})
        );
    }
    assert!(
        strict.call("probe", args).await.warnings.is_empty(),
        "strict binding treats null as absence silently"
    );
}

#[test]
fn the_lint_finds_what_makes_models_stumble() {
    /// Files.
    #[tool(name = "Files")]
    async fn files(#[param(description = "The path")] path: String) -> String {
        path
    }

    /// Read one file from the workspace and return its text.
    #[tool]
    async fn read_file(#[param(description = "Where the file is, relative to the root")] path: String) -> String {
        path
    }

    /// Read several files from the workspace and return their text.
    #[tool]
    async fn read_files(#[param(description = "Where the files are")] paths: Vec<String>) -> String {
        paths.join(",")
    }

    let mut registry = ToolRegistry::new();
    registry
        .register(Files)
        .unwrap()
        .register(ReadFile)
        .unwrap()
        .register(ReadFiles)
        .unwrap();
    let findings = registry.lint(&Selection::all());
    let rules: Vec<(LintRule, Option<&str>)> = findings.iter().map(|f| (f.rule, f.tool.as_deref())).collect();
    assert_eq!(
        rules,
        [
            (LintRule::NameNotSnakeCase, Some("Files")),
            (LintRule::NameNotVerb, Some("Files")),
            (LintRule::DescriptionTooShort, Some("Files")),
            (LintRule::DescriptionRepeatsName, Some("Files")),
            (LintRule::NearDuplicateNames, Some("read_file")),
        ]
    );
    assert_eq!(findings[3].param.as_deref(), Some("path"));
    assert!(
        findings[0].to_string().starts_with("name_not_snake_case (Files): "),
        "{}",
        findings[0]
    );

    let mut many = ToolRegistry::new();
    macro_rules! tools {
        ($($name:ident),*) => {$(
            /// Get one of many similar values for the test of request size.
            #[tool]
            async fn $name() -> u8 { 0 }
        )*};
    }
    tools!(
        get_a1, get_b2, get_c3, get_d4, get_e5, get_f6, get_g7, get_h8, get_i9, get_j0, get_kk
    );
    many.register(GetA1)
        .unwrap()
        .register(GetB2)
        .unwrap()
        .register(GetC3)
        .unwrap()
        .register(GetD4)
        .unwrap();
    many.register(GetE5)
        .unwrap()
        .register(GetF6)
        .unwrap()
        .register(GetG7)
        .unwrap()
        .register(GetH8)
        .unwrap();
    many.register(GetI9)
        .unwrap()
        .register(GetJ0)
        .unwrap()
        .register(GetKk)
        .unwrap();
    let findings = many.lint(&Selection::all());
    assert!(
        findings.iter().any(|f| f.rule == LintRule::TooManyTools),
        "{findings:?}"
    );
    assert!(
        !many
            .lint(&Selection::all().deny(["get_kk"]))
            .iter()
            .any(|f| f.rule == LintRule::TooManyTools)
    );
}

#[test]
fn a_call_without_a_name_is_a_malformed_message_in_every_format() {
    // Found by the fuzz targets: each parser used to return a call named "".
    let cases = [
        (
            "anthropic",
            anthropic::tool_calls(&json!({"content": [{"type": "tool_use", "id": "t1", "name": ""}]})),
        ),
        (
            "openai chat",
            openai::chat_tool_calls(&json!({"tool_calls": [{"id": "c1", "function": {"name": ""}}]})),
        ),
        (
            "openai responses",
            openai::responses_tool_calls(&json!([{"type": "function_call", "call_id": "c1", "name": ""}])),
        ),
        (
            "gemini",
            gemini::tool_calls(&json!({"parts": [{"functionCall": {"name": ""}}]})),
        ),
        ("mcp", mcp::tool_call(&json!({"name": ""})).map(|c| vec![c])),
    ];
    for (format, parsed) in cases {
        let error = parsed.expect_err(format);
        assert_eq!(error.kind(), FormatErrorKind::Malformed, "{format}: {error}");
    }
}

/// Keep a record of anything.
#[tool]
async fn keep_record(
    #[param(description = "The record, of any shape")] record: Value,
    #[param(description = "More records")] more: Vec<Value>,
    #[param(description = "Records by key")] by_key: std::collections::BTreeMap<String, Value>,
    #[param(description = "A note, if any")] note: Option<Value>,
) -> String {
    let _ = (&more, &by_key, &note);
    record.to_string()
}

/// A tool whose schema was written elsewhere, as a mounted MCP tool's is:
/// its definition carries `schema` as written, its one parameter `query`.
struct Written(tool_runtime::ToolDefinition);

impl Written {
    fn new(name: &str, schema: Value) -> Self {
        let query = tool_runtime::schema::Field::new("query", String::shape(), false, "remote");
        let definition = tool_runtime::ToolDefinition::new(name, "Look something up in the remote index.", vec![query])
            .with_input_schema(schema);
        Written(definition)
    }
}

impl tool_runtime::Tool for Written {
    fn definition(&self) -> &tool_runtime::ToolDefinition {
        &self.0
    }

    fn invoke(
        &self,
        _: tool_runtime::BoundArguments,
        _: &tool_runtime::CallScope<'_>,
    ) -> Result<tool_runtime::ToolFuture, Vec<tool_runtime::CallError>> {
        Ok(Box::pin(async { tool_runtime::ToolOutput::text("found") }))
    }
}

/// What a mounted tool's schema may hold that a native one never does.
fn written_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "query": {"type": "string"},
            "kind": {"const": "exact"},
            "level": {"const": 2},
            "anything": {},
            "unresolved": {"description": "Was a $ref to another document"},
            "list": {"type": "array"},
            "filters": {"properties": {"tag": {"enum": ["a", "b"]}}},
            "either": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
        },
        "required": ["query"],
    })
}

/// Every node of a Gemini schema has a type, only a string has an `enum`,
/// and every list says what its items are.
fn assert_gemini_typed(node: &Value, path: &str) {
    let ty = node["type"].as_str();
    assert!(
        matches!(
            ty,
            Some("STRING" | "NUMBER" | "INTEGER" | "BOOLEAN" | "ARRAY" | "OBJECT" | "NULL")
        ),
        "{path} has no type: {node}"
    );
    assert!(node.get("enum").is_none() || ty == Some("STRING"), "{path}: {node}");
    assert!(ty != Some("ARRAY") || node.get("items").is_some(), "{path}: {node}");
    for (name, property) in node["properties"].as_object().into_iter().flatten() {
        assert_gemini_typed(property, &format!("{path}.{name}"));
    }
    if let Some(items) = node.get("items") {
        assert_gemini_typed(items, &format!("{path}[]"));
    }
    for (i, member) in node["anyOf"].as_array().into_iter().flatten().enumerate() {
        assert_gemini_typed(member, &format!("{path}|{i}"));
    }
}

#[tokio::test]
async fn every_node_of_a_gemini_declaration_has_a_type() {
    // Gemini refuses a request when one node has none, or an `enum` on
    // anything but a string.
    let mut registry = registry();
    registry
        .register(KeepRecord)
        .unwrap()
        .register(Written::new("search_index", written_schema()))
        .unwrap();
    let declarations = registry.definitions(Format::Gemini, &Selection::all());
    assert_eq!(declarations.len(), 7);
    for declaration in declarations.iter() {
        assert_gemini_typed(&declaration["parameters"], declaration["name"].as_str().unwrap());
    }
    let keep = declarations.iter().find(|d| d["name"] == "keep_record").unwrap();
    let record = &keep["parameters"]["properties"]["record"];
    assert_eq!(record["description"], "The record, of any shape");
    assert_eq!(
        record["anyOf"].as_array().unwrap().len(),
        5,
        "each type a value can have"
    );
    // What a model sends for such a node reaches the tool as sent.
    let arguments = json!({"record": {"a": [1, "b"]}, "more": [1, "two", null], "by_key": {}});
    let result = registry.call("keep_record", arguments).await;
    assert_eq!(result.text(), r#"{"a":[1,"b"]}"#);
}

#[test]
fn strict_variants_fall_back_for_a_required_key_no_property_defines() {
    // Strict mode would forbid `scope`, which the tool requires: every call
    // would fail as missing it.
    let mut schema = written_schema();
    schema["properties"] = json!({"query": {"type": "string"}});
    schema["required"] = json!(["query", "scope"]);
    for (format, definition) in strict_definitions(schema.clone()) {
        let definition = &definition;
        let (strict, parameters) = strict_and_parameters(format, definition);
        assert!(strict.is_none_or(|s| *s == false), "{format:?}: {definition}");
        assert_eq!(
            parameters["properties"], schema["properties"],
            "{format:?} keeps the plain schema"
        );
        let required = parameters["required"].as_array().unwrap();
        assert!(required.contains(&json!("scope")), "{format:?}: {parameters}");
        assert!(
            parameters.get("additionalProperties").is_none(),
            "{format:?}: {parameters}"
        );
    }
}

/// A hand-written tool of input `schema`, as each strict format defines it.
fn strict_definitions(schema: Value) -> Vec<(Format, Value)> {
    let mut registry = ToolRegistry::new();
    registry.register(Written::new("search_index", schema)).unwrap();
    [
        Format::AnthropicStrict,
        Format::OpenAiChatStrict,
        Format::OpenAiResponsesStrict,
    ]
    .into_iter()
    .map(|format| (format, registry.definitions(format, &Selection::all())[0].clone()))
    .collect()
}

/// A strict format's definition: its `strict` flag, if any, and its
/// parameters' schema.
fn strict_and_parameters(format: Format, definition: &Value) -> (Option<&Value>, &Value) {
    match format {
        Format::AnthropicStrict => (definition.get("strict"), &definition["input_schema"]),
        Format::OpenAiChatStrict => (
            definition["function"].get("strict"),
            &definition["function"]["parameters"],
        ),
        _ => (definition.get("strict"), &definition["parameters"]),
    }
}

/// A mounted schema may put object keywords on a string (a real Notion
/// schema did). Rewritten for strict mode they would give a string
/// `properties`, `additionalProperties` and an untyped child, which the
/// strict checkers refuse, and with it the whole request: strict
/// definitions leave them out, as Gemini's do.
#[test]
fn object_keywords_on_a_string_are_left_out_of_strict_definitions() {
    let schema = json!({
        "type": "object",
        "properties": {"query": {"type": "string", "properties": {"x": {}}, "required": ["x"]}},
        "required": ["query"],
    });
    for (format, definition) in strict_definitions(schema) {
        let definition = &definition;
        let (strict, parameters) = strict_and_parameters(format, definition);
        assert_eq!(strict, Some(&json!(true)), "{format:?}: {definition}");
        assert_eq!(
            parameters["properties"]["query"],
            json!({"type": "string"}),
            "{format:?}: {definition}"
        );
    }
}

/// Return a long text document.
#[tool]
async fn read_log() -> Content {
    Content::document("x".repeat(50_000).as_bytes(), "text/plain", Some("app.log".into()))
}

/// Say "done", with a large structured result beside it, as a mounted tool
/// may.
#[tool]
async fn export_rows() -> tool_runtime::ToolOutput {
    let mut output = tool_runtime::ToolOutput::text("done");
    output.structured_content = Some(json!({"rows": vec!["row"; 20_000]}));
    output
}

#[tokio::test]
async fn text_documents_and_structured_content_are_held_to_the_output_limit() {
    let mut registry = ToolRegistry::new().with_max_output_bytes(Some(1_000));
    registry.register(ReadLog).unwrap().register(ExportRows).unwrap();
    let call = |name: &str, id: &str| tool_runtime::ToolCall::new(name, json!({})).with_id(id);
    let log = registry.call_one(call("read_log", "call_1")).await;
    let replies = [
        anthropic::reply(std::slice::from_ref(&log)).unwrap(),
        json!(openai::chat_reply(std::slice::from_ref(&log)).unwrap()),
        json!(openai::responses_reply(std::slice::from_ref(&log)).unwrap()),
        gemini::reply(std::slice::from_ref(&log)).unwrap(),
    ];
    for reply in replies {
        let text = reply.to_string();
        assert!(text.len() < 1_500, "{} bytes: {}", text.len(), &text[..200]);
        assert!(text.contains("[output cut here: 49000 more bytes left out]"), "{text}");
    }
    let rows = registry.call_one(call("export_rows", "call_2")).await;
    let reply = gemini::reply(&[rows]).unwrap();
    assert_eq!(reply["parts"][0]["functionResponse"]["response"]["output"], "done");
}

#[test]
fn gemini_calls_in_a_later_candidate_are_an_error_never_dropped() {
    let call = json!({"functionCall": {"name": "probe", "args": {}}});
    let response = json!({"candidates": [
        {"content": {"role": "model", "parts": [{"text": "first"}]}},
        {"content": {"role": "model", "parts": [call]}},
    ]});
    let error = gemini::tool_calls(&response).unwrap_err();
    assert_eq!(error.kind(), FormatErrorKind::Malformed, "{error}");
    assert!(error.to_string().contains("2 candidates"), "{error}");
    // Later candidates of text only leave the first one's calls readable;
    // the candidate itself can still be passed.
    let response = json!({"candidates": [
        {"content": {"role": "model", "parts": [call]}},
        {"content": {"role": "model", "parts": [{"text": "second"}]}},
    ]});
    assert_eq!(gemini::tool_calls(&response).unwrap().len(), 1);
    assert_eq!(
        gemini::tool_calls(&response["candidates"][0]["content"]).unwrap().len(),
        1
    );
}

#[test]
fn an_openai_message_that_is_no_object_is_an_error_never_no_calls() {
    let calls = json!([{"id": "c1", "type": "function", "function": {"name": "probe", "arguments": "{}"}}]);
    for message in [calls, Value::Null, json!("text")] {
        let error = openai::chat_tool_calls(&message).unwrap_err();
        assert_eq!(error.kind(), FormatErrorKind::Malformed, "{message}: {error}");
    }
}

#[test]
fn a_gemini_turn_with_nothing_in_it_has_no_calls_and_a_lost_call_is_an_error() {
    for empty in [
        json!({"candidates": [{"content": {"role": "model"}, "finishReason": "STOP"}]}),
        json!({"candidates": [{"finishReason": "MAX_TOKENS", "index": 0}]}),
        json!({"candidates": [{"finishReason": "SAFETY"}]}),
        json!({"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"}}),
        json!({"candidates": [], "promptFeedback": {"blockReason": "OTHER"}}),
        json!({"role": "model"}),
        json!({"candidates": [{"content": {}, "finishReason": "MAX_TOKENS"}]}),
    ] {
        assert_eq!(gemini::tool_calls(&empty).unwrap().len(), 0, "{empty}");
    }
    for lost in ["MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL"] {
        let response = json!({"candidates": [{"content": {"role": "model"}, "finishReason": lost}]});
        let error = gemini::tool_calls(&response).unwrap_err();
        assert_eq!(error.kind(), FormatErrorKind::Malformed);
        assert!(error.to_string().contains(lost), "{error}");
    }
    // Still malformed: no content and no reason, or no turn at all.
    for malformed in [
        json!({"candidates": [{}]}),
        json!({"candidates": []}),
        json!({"text": "hi"}),
    ] {
        assert_eq!(
            gemini::tool_calls(&malformed).unwrap_err().kind(),
            FormatErrorKind::Malformed,
            "{malformed}"
        );
    }
    // A later candidate's calls are never dropped behind an empty first.
    let response = json!({"candidates": [
        {"finishReason": "MAX_TOKENS"},
        {"content": {"role": "model", "parts": [{"functionCall": {"name": "probe", "args": {}}}]}},
    ]});
    assert!(gemini::tool_calls(&response).is_err());
}

/// With structured content, what a result says beside it still reaches
/// Gemini: the note of `with_warnings_shown` and an attached image's label.
#[tokio::test]
async fn a_gemini_structured_reply_keeps_the_notes_beside_it() {
    let registry = registry();
    let result = registry
        .call("probe", json!({"pattern": "src/**", "max_results": "5"}))
        .await
        .with_warnings_shown();
    let reply = gemini::reply(std::slice::from_ref(&result)).unwrap();
    let response = &reply["parts"][0]["functionResponse"]["response"];
    assert_eq!(response["output"]["pattern"], "src/**", "{reply}");
    let notes = response["notes"].as_str().unwrap_or_else(|| panic!("{reply}"));
    assert!(notes.contains("accepted after changes"), "{notes}");
    assert!(
        !notes.contains("\"pattern\""),
        "the structured value is not repeated: {notes}"
    );
    // Without anything beside it, the output goes alone.
    let plain = registry.call("probe", json!({"pattern": "src/**"})).await;
    let reply = gemini::reply(&[plain]).unwrap();
    assert!(
        reply["parts"][0]["functionResponse"]["response"].get("notes").is_none(),
        "{reply}"
    );
}

/// Summary statistics.
#[derive(Serialize, Deserialize, ToolParam)]
struct Stats {
    /// How many values.
    count: usize,
    /// Their mean.
    mean: f64,
    /// The values seen, if kept.
    seen: Option<Vec<f64>>,
}

/// Summarise the values.
#[tool]
async fn summarise(
    #[param(description = "The values")] values: Vec<f64>,
    #[param(description = "Keep them", default)] keep: bool,
) -> Stats {
    let count = values.len();
    let mean = values.iter().sum::<f64>() / count as f64;
    let mut seen = values;
    seen.push(f64::INFINITY);
    Stats {
        count,
        mean,
        seen: keep.then_some(seen),
    }
}

/// serde writes a float that is not finite as `null`, which the output
/// schema refuses: MCP clients check structured content against it, so the
/// MCP reply leaves it out and is an error; other formats are untouched.
#[tokio::test]
async fn a_structured_result_that_breaks_its_output_schema_is_no_mcp_structured_content() {
    let mut registry = ToolRegistry::new();
    registry.register(Summarise).unwrap();
    let fine = registry.call("summarise", json!({"values": [1.0, 3.0]})).await;
    let reply = mcp::reply(&fine);
    assert_eq!(reply["isError"], false, "{reply}");
    assert_eq!(
        reply["structuredContent"],
        json!({"count": 2, "mean": 2.0, "seen": null})
    );

    let empty = registry.call("summarise", json!({"values": []})).await;
    assert!(!empty.is_error, "the call itself succeeded");
    let reply = mcp::reply(&empty);
    assert_eq!(reply["isError"], true, "{reply}");
    assert!(reply.get("structuredContent").is_none(), "{reply}");
    let last = reply["content"].as_array().unwrap().last().unwrap()["text"]
        .as_str()
        .unwrap();
    assert!(last.contains("`mean` is null"), "{last}");
    assert!(reply["content"][0]["text"].as_str().unwrap().contains("\"mean\":null"));
    let gemini = gemini::reply(std::slice::from_ref(&empty)).unwrap();
    assert_eq!(
        gemini["parts"][0]["functionResponse"]["response"]["output"],
        json!({"count": 0, "mean": null, "seen": null}),
        "{gemini}"
    );

    // Inside a list, the path names the item.
    let kept = registry.call("summarise", json!({"values": [1.0], "keep": true})).await;
    let reply = mcp::reply(&kept);
    assert_eq!(reply["isError"], true, "{reply}");
    assert!(reply.to_string().contains("`seen[1]` is null"), "{reply}");
}
