//! Every JSON shape we emit, checked against the providers' OFFICIAL
//! published types: the Anthropic, OpenAI, Google GenAI and MCP Python SDKs
//! (pydantic), and every emitted schema against the JSON Schema 2020-12
//! meta-schema (the `jsonschema` package).
//!
//! The test renders the definitions of a set of realistic tools in every
//! `Format`, runs realistic assistant messages through each provider's
//! calls-in function and the registry, builds each provider's result shape,
//! writes all of it as cases to a temporary JSON file and runs
//! `tests/python/validate.py` over it with the Python environment that
//! `scripts/python-env.sh` sets up (once; later runs reuse it).

mod common {
    pub mod probe;
    pub mod python;
}

use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;
use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tool_runtime::format::{Format, Selection, anthropic, gemini, mcp, openai, strict};
use tool_runtime::{CallArguments, Content, ToolCall, ToolError, ToolParam, ToolRegistry, ToolResult, tool};

use common::probe::Probe;

// --- the tools -------------------------------------------------------------

/// The state of an issue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToolParam)]
#[serde(rename_all = "snake_case")]
pub enum IssueState {
    /// Still being worked on.
    #[default]
    Open,
    /// Done or rejected.
    Closed,
    /// Either.
    All,
}

/// Search the issue tracker.
///
/// Use it to find issues by text, label or state. Returns one line per
/// issue: its number, state and title.
#[tool]
async fn search_issues(
    #[param(
        description = "Words to look for in titles and bodies",
        min_length = 1,
        max_length = 200
    )]
    query: String,
    #[param(description = "Only issues in this state", default = IssueState::Open)] state: IssueState,
    #[param(description = "Largest number of issues to return", default = 20, min = 1, max = 100)] limit: u32,
    #[param(description = "Only issues carrying all of these labels")] labels: HashSet<String>,
    #[param(
        description = "Only issues updated on or after this day, as YYYY-MM-DD",
        pattern = "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"
    )]
    since: Option<String>,
    #[param(
        description = "Only issues assigned to one of these people",
        min_items = 1,
        max_items = 10
    )]
    assignees: Option<Vec<String>>,
    #[param(description = "Rank issues with this score or better first", min = 0.0, max = 1.0)] min_score: Option<f64>,
) -> String {
    format!(
        "#12 {state:?} {query} (limit {limit}, {} labels, since {since:?}, {assignees:?}, {min_score:?})",
        labels.len()
    )
}

/// How urgent a meeting is.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, ToolParam)]
#[serde(rename_all = "UPPERCASE")]
pub enum Priority {
    /// Whenever it suits.
    Low,
    /// This week.
    Normal,
    /// Today.
    Urgent,
}

/// When a meeting happens.
#[derive(Clone, Debug, Serialize, Deserialize, ToolParam)]
pub struct TimeSlot {
    /// The start, as an RFC 3339 date and time.
    #[param(pattern = "^[0-9]{4}-[0-9]{2}-[0-9]{2}T")]
    pub start: String,
    /// How long it lasts, in minutes.
    #[param(min = 15, max = 480)]
    pub duration_minutes: u16,
    /// The time zone; UTC when absent.
    pub time_zone: Option<String>,
}

/// Someone invited to a meeting.
#[derive(Clone, Debug, Serialize, Deserialize, ToolParam)]
#[serde(rename_all = "camelCase")]
pub struct Attendee {
    /// Their e-mail address.
    #[param(pattern = "^[^@]+@[^@]+$", max_length = 254)]
    pub email: String,
    /// Whether they may skip it.
    #[serde(default)]
    pub is_optional: bool,
}

/// One topic of a meeting's agenda.
#[derive(Clone, Debug, Serialize, Deserialize, ToolParam)]
pub struct AgendaItem {
    /// Minutes set aside for it.
    #[param(min = 5, max = 120)]
    pub minutes: u16,
    /// Who leads it; the organizer when absent.
    pub owner: Option<String>,
}

/// Put a meeting in the shared calendar and invite people to it.
#[tool]
async fn schedule_meeting(
    #[param(description = "What the meeting is about", min_length = 3)] title: String,
    #[param(description = "When it happens")] slot: TimeSlot,
    #[param(description = "Who is invited", min_items = 1)] attendees: Vec<Attendee>,
    #[param(description = "How urgent it is", default = Priority::Normal)] priority: Priority,
    #[param(description = "A second slot, if the first does not suit everyone")] fallback: Option<TimeSlot>,
    #[param(description = "The agenda, by topic")] agenda: BTreeMap<String, AgendaItem>,
    #[param(description = "Opaque data for the calendar integration")] extra: serde_json::Value,
) -> Result<String, ToolError> {
    Ok(format!(
        "Scheduled `{title}` at {} for {} minutes with {} people ({priority:?}, fallback {}, {} agenda items, {} minutes planned, extra {extra})",
        slot.start,
        slot.duration_minutes,
        attendees.len(),
        fallback.is_some(),
        agenda.len(),
        agenda.values().map(|item| u32::from(item.minutes)).sum::<u32>()
    ))
}

/// Tell the current date and time in UTC.
#[tool]
async fn current_time() -> String {
    "2025-01-01T12:00:00Z".to_owned()
}

/// Read a text file of the workspace.
#[tool(
    title = "Read a file",
    read_only = true,
    destructive = false,
    idempotent = true,
    open_world = false,
    tags = ["fs"]
)]
async fn read_file(
    #[param(description = "The file's path, relative to the workspace root", min_length = 1)] path: String,
    #[param(description = "The first line to return, counting from 1", default = 1, min = 1)] from_line: u32,
) -> String {
    format!("{path}:{from_line}: fn main() {{}}")
}

/// One mounted file system.
#[derive(Clone, Debug, Serialize, Deserialize, ToolParam)]
pub struct Mount {
    /// Where it is mounted.
    pub path: String,
    /// Its size in bytes.
    pub total_bytes: u64,
    /// The bytes in use.
    pub used_bytes: u64,
    /// The file system's label, when it has one (serialized as `null` when
    /// absent, which the output schema must allow).
    pub label: Option<String>,
}

/// The disk usage of the machine.
#[derive(Clone, Debug, Serialize, Deserialize, ToolParam)]
pub struct UsageReport {
    /// The host's name.
    pub host: String,
    /// The share of all space in use, from 0 to 1.
    pub used_fraction: f64,
    /// Every mounted file system.
    pub mounts: Vec<Mount>,
}

/// Report how full the disks are.
#[tool]
async fn disk_usage(
    #[param(description = "Include pseudo file systems such as /proc", default = false)] all: bool,
) -> UsageReport {
    let mut mounts = vec![Mount {
        path: "/".to_owned(),
        total_bytes: 500_000_000_000,
        used_bytes: 125_000_000_000,
        label: Some("root".to_owned()),
    }];
    if all {
        mounts.push(Mount {
            path: "/proc".to_owned(),
            total_bytes: 0,
            used_bytes: 0,
            label: None,
        });
    }
    UsageReport {
        host: "build-01".to_owned(),
        used_fraction: 0.25,
        mounts,
    }
}

/// A 1x1 transparent PNG.
const PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00,
    0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4, 0x89, 0x00, 0x00, 0x00, 0x0d, 0x49,
    0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x00, 0x01, 0x00, 0x00, 0x05, 0x00, 0x01, 0x0d, 0x0a, 0x2d, 0xb4, 0x00, 0x00,
    0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
];

/// A minimal PDF.
const PDF: &[u8] = b"%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n\
2 0 obj << /Type /Pages /Kids [] /Count 0 >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n";

/// Render the monthly report: a summary, a chart and the full PDF.
#[tool]
async fn monthly_report(
    #[param(description = "The month, as YYYY-MM", pattern = "^[0-9]{4}-[0-9]{2}$")] month: String,
) -> Vec<Content> {
    vec![
        Content::text(format!("The report for {month}: revenue up 4%.")),
        Content::image(PNG, "image/png"),
        Content::document(PDF, "application/pdf", Some(format!("report-{month}.pdf"))),
        Content::document(
            b"Revenue: 104\nCosts: 80\n",
            "text/plain",
            Some("figures.txt".to_owned()),
        ),
    ]
}

// Documents and images of types a provider does not take natively must
// still reach it in a shape it accepts (Anthropic takes only PDF and plain
// text documents, and JPEG, PNG, GIF and WebP images).

/// Export the meeting notes as Markdown and the action items as CSV.
#[tool]
async fn export_notes(#[param(description = "The meeting's id")] meeting: u64) -> Vec<Content> {
    vec![
        Content::document(
            format!("# Meeting {meeting}\n\n- ship it\n").as_bytes(),
            "text/markdown",
            Some("notes.md".to_owned()),
        ),
        Content::document(b"owner,item\nada,ship it\n", "text/csv", Some("actions.csv".to_owned())),
    ]
}

/// Draw the architecture diagram as SVG.
#[tool]
async fn draw_diagram(#[param(description = "The services to show")] services: Vec<String>) -> Content {
    let boxes: String = services
        .iter()
        .enumerate()
        .map(|(i, s)| format!("<text x=\"10\" y=\"{}\">{s}</text>", 20 * (i + 1)))
        .collect();
    Content::image(
        format!("<svg xmlns=\"http://www.w3.org/2000/svg\">{boxes}</svg>").as_bytes(),
        "image/svg+xml",
    )
}

/// Rotate and compress the service logs.
#[tool]
async fn rotate_logs() {}

/// Take a screenshot of the running app.
#[tool]
async fn screenshot() -> Content {
    Content::image(PNG, "image/png")
}

/// Delete a branch of the repository.
#[tool(destructive = true)]
async fn delete_branch(#[param(description = "The branch's name")] branch: String) -> Result<String, ToolError> {
    Err(ToolError::new(format!(
        "the branch `{branch}` is protected; ask a maintainer to unprotect it first"
    )))
}

/// Render a preview of the page; it fails half-way, keeping what it drew
/// (a failure with an image, which Anthropic takes only as text, and an
/// image of no bytes, which it refuses).
#[tool]
async fn render_preview() -> tool_runtime::ToolOutput {
    let mut output = tool_runtime::ToolOutput::error("the renderer ran out of memory");
    output.content.push(Content::image(PNG, "image/png"));
    output.content.push(Content::image(b"", "image/png"));
    output
}

fn registry() -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    registry
        .register(SearchIssues)
        .and_then(|r| r.register(ScheduleMeeting))
        .and_then(|r| r.register(CurrentTime))
        .and_then(|r| r.register(ReadFile))
        .and_then(|r| r.register(DiskUsage))
        .and_then(|r| r.register(MonthlyReport))
        .and_then(|r| r.register(ExportNotes))
        .and_then(|r| r.register(DrawDiagram))
        .and_then(|r| r.register(RotateLogs))
        .and_then(|r| r.register(Screenshot))
        .and_then(|r| r.register(DeleteBranch))
        .and_then(|r| r.register(RenderPreview))
        .and_then(|r| r.register(Probe))
        .unwrap();
    registry
}

// --- the calls a model makes -------------------------------------------------

/// `(tool, arguments)` of one assistant turn: every tool, a call the binder
/// refuses, a call of a tool that does not exist, and a tool error.
fn turn() -> Vec<(&'static str, Value)> {
    turn_with_outcomes()
        .into_iter()
        .map(|(name, args, _)| (name, args))
        .collect()
}

/// The calls of [`turn`], each with whether it ends in an error result.
fn turn_with_outcomes() -> Vec<(&'static str, Value, bool)> {
    vec![
        (
            "search_issues",
            json!({
                "query": "crash on start", "state": "all", "labels": ["bug", "p1"],
                "since": "2025-01-01", "assignees": ["ada"], "min_score": 0.5
            }),
            false,
        ),
        (
            "schedule_meeting",
            json!({
                "title": "Release planning",
                "slot": {"start": "2025-02-03T10:00:00Z", "duration_minutes": 60},
                "attendees": [{"email": "ada@example.com"}, {"email": "bob@example.com", "isOptional": true}],
                "priority": "URGENT",
                "fallback": {"start": "2025-02-04T10:00:00+01:00", "duration_minutes": 45, "time_zone": "Europe/Paris"},
                "agenda": {"scope": {"minutes": 20, "owner": "ada"}, "dates": {"minutes": "10"}},
                "extra": {"calendar": "team", "color": 3, "tags": ["a", null]}
            }),
            false,
        ),
        ("current_time", json!({}), false),
        ("read_file", json!({"path": "src/main.rs"}), false),
        ("disk_usage", json!({"all": true}), false),
        ("monthly_report", json!({"month": "2025-01"}), false),
        ("screenshot", json!({}), false),
        ("export_notes", json!({"meeting": 42}), false),
        ("draw_diagram", json!({"services": ["api", "db"]}), false),
        ("rotate_logs", json!({}), false),
        // The tool returns `Err(ToolError)`.
        ("delete_branch", json!({"branch": "main"}), true),
        // It fails with an image.
        ("render_preview", json!({}), true),
        (
            "probe",
            json!({"pattern": "**/*.rs", "max_results": "5", "mode": "WRITE", "window": {"start": 3}}),
            false,
        ),
        // Refused by the binder: an error result listing codes.
        ("probe", json!({"max_results": 0, "mode": "delete"}), true),
        // No such tool.
        ("serch_issues", json!({"query": "x"}), true),
    ]
}

fn anthropic_assistant() -> Value {
    let mut content = vec![json!({"type": "text", "text": "Let me look into that."})];
    for (i, (name, input)) in turn().into_iter().enumerate() {
        content.push(json!({"type": "tool_use", "id": format!("toolu_01A{i:02}"), "name": name, "input": input}));
    }
    json!({"role": "assistant", "content": content})
}

fn openai_chat_assistant() -> Value {
    let tool_calls: Vec<Value> = turn()
        .into_iter()
        .enumerate()
        .map(|(i, (name, args))| {
            json!({"id": format!("call_{i:02}abc"), "type": "function", "function": {"name": name, "arguments": args.to_string()}})
        })
        .collect();
    json!({"role": "assistant", "content": null, "tool_calls": tool_calls})
}

fn responses_output() -> Value {
    let mut output = vec![json!({"type": "reasoning", "id": "rs_01", "summary": []})];
    for (i, (name, args)) in turn().into_iter().enumerate() {
        output.push(json!({
            "type": "function_call",
            "id": format!("fc_{i:02}"),
            "call_id": format!("call_{i:02}xyz"),
            "name": name,
            "arguments": args.to_string(),
            "status": "completed",
        }));
    }
    json!({"id": "resp_01", "object": "response", "output": output})
}

fn gemini_model_turn(with_ids: bool) -> Value {
    let mut parts = vec![json!({"text": "Checking."})];
    for (i, (name, args)) in turn().into_iter().enumerate() {
        let mut call = json!({"name": name, "args": args});
        if with_ids {
            call["id"] = json!(format!("fc-{i}"));
        }
        parts.push(json!({ "functionCall": call }));
    }
    json!({"role": "model", "parts": parts})
}

// --- cases -------------------------------------------------------------------

#[derive(Default)]
struct Cases(Vec<Value>);

impl Cases {
    fn add(&mut self, kind: &str, name: impl Into<String>, value: Value) {
        self.0.push(json!({"kind": kind, "name": name.into(), "value": value}));
    }

    fn schema(&mut self, name: impl Into<String>, schema: &Value) {
        self.add("json_schema", name, schema.clone());
    }

    fn instance(&mut self, name: impl Into<String>, schema: &Value, instance: &Value) {
        self.add("instance", name, json!({"schema": schema, "instance": instance}));
    }
}

/// The SDK type that checks a definition of `format`, and where the
/// definition keeps its input schema when that schema is JSON Schema
/// (Gemini's is an OpenAPI subset).
fn definition_kind(format: Format) -> (&'static str, Option<&'static str>) {
    match format {
        Format::Anthropic | Format::AnthropicStrict => ("anthropic_tool", Some("/input_schema")),
        Format::OpenAiChat | Format::OpenAiChatStrict => ("openai_chat_tool", Some("/function/parameters")),
        Format::OpenAiResponses | Format::OpenAiResponsesStrict => ("openai_responses_tool", Some("/parameters")),
        Format::Gemini => ("gemini_function_declaration", None),
        Format::Mcp => ("mcp_tool", Some("/inputSchema")),
        other => panic!("{other:?} is a new format: say which SDK type checks it"),
    }
}

fn definition_cases(registry: &ToolRegistry, cases: &mut Cases) {
    for &format in Format::ALL {
        let listed = serde_json::to_value(registry.definitions(format, &Selection::all())).unwrap();
        let (kind, schema_at) = definition_kind(format);
        // Each definition as it goes on the wire (serialized in order).
        let listing = registry.definitions(format, &Selection::all());
        let wire: Vec<Value> = listing.iter().map(|s| serde_json::to_value(s).unwrap()).collect();
        let rendered: Vec<&Value> = wire.iter().collect();
        let listed_items: Vec<&Value> = match format {
            Format::Gemini => {
                cases.add("gemini_tool", "definitions(Gemini)", listed.clone());
                listed["functionDeclarations"].as_array().unwrap().iter().collect()
            }
            _ => listed.as_array().unwrap().iter().collect(),
        };
        assert_eq!(
            listed_items, rendered,
            "definitions({format:?}) lists each rendering once"
        );
        for (tool, value) in registry.tools().zip(&rendered) {
            let name = format!("{format:?} {}", tool.definition().name());
            cases.add(kind, &name, (*value).clone());
            if let Some(pointer) = schema_at {
                let schema = value
                    .pointer(pointer)
                    .unwrap_or_else(|| panic!("{name}: no schema at {pointer}"));
                cases.schema(format!("{name} input schema"), schema);
            }
            if format == Format::Mcp
                && let Some(output) = value.get("outputSchema")
            {
                cases.schema(format!("{name} output schema"), output);
            }
        }
    }
    for tool in registry.tools() {
        let definition = tool.definition();
        cases.schema(
            format!("{} input_schema()", definition.name()),
            definition.input_schema(),
        );
        if let Some(output) = definition.output_schema() {
            cases.schema(format!("{} output_schema()", definition.name()), output);
        }
    }
}

/// Results of one turn: in call order, errors exactly where expected, and
/// every kind of content among them.
fn check_turn_results(provider: &str, results: &[ToolResult]) {
    let expected = turn_with_outcomes();
    assert_eq!(results.len(), expected.len(), "{provider}: one result per call");
    for (result, (name, _, fails)) in results.iter().zip(&expected) {
        assert_eq!(result.tool(), *name, "{provider}: results in call order");
        assert_eq!(
            result.is_error,
            *fails,
            "{provider}: `{name}` gave {:?}: {}",
            result.outcome(),
            result.text()
        );
    }
    let blocks: Vec<&Content> = results.iter().flat_map(|r| &r.content).collect();
    assert!(
        blocks.iter().any(|c| matches!(c, Content::Image { .. })),
        "{provider}: an image"
    );
    assert!(
        blocks.iter().any(|c| matches!(c, Content::Document { .. })),
        "{provider}: a document"
    );
    assert!(
        results.iter().any(|r| r.structured_content.is_some()),
        "{provider}: structured content"
    );
}

async fn anthropic_cases(registry: &ToolRegistry, cases: &mut Cases) {
    let assistant = anthropic_assistant();
    cases.add("anthropic_message", "assistant turn (fixture)", assistant.clone());
    let calls = anthropic::tool_calls(&assistant).unwrap();
    let results = registry.call_all(calls).await;
    check_turn_results("anthropic", &results);

    let message = anthropic::reply_with_notice(&results, "9 of 20 tool calls left in this task").unwrap();
    cases.add("anthropic_message", "reply_with_notice", message);
    cases.add(
        "anthropic_message",
        "reply, no notice",
        anthropic::reply(&results).unwrap(),
    );
    for result in &results {
        let message = anthropic::reply(std::slice::from_ref(result)).unwrap();
        cases.add("anthropic_message", format!("reply {}", result.tool()), message);
    }
}

async fn openai_chat_cases(registry: &ToolRegistry, cases: &mut Cases) {
    let assistant = openai_chat_assistant();
    cases.add(
        "openai_chat_assistant_message",
        "assistant turn (fixture)",
        assistant.clone(),
    );
    let calls = openai::chat_tool_calls(&assistant).unwrap();
    assert!(calls.iter().all(|c| matches!(c.arguments, CallArguments::Text(_))));
    let results = registry.call_all(calls).await;
    check_turn_results("openai chat", &results);
    for (i, message) in openai::chat_reply(&results).unwrap().into_iter().enumerate() {
        cases.add("openai_chat_tool_message", format!("chat_reply[{i}]"), message);
    }
}

async fn openai_responses_cases(registry: &ToolRegistry, cases: &mut Cases) {
    let response = responses_output();
    for item in response["output"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["type"] == "function_call")
    {
        cases.add(
            "openai_responses_function_call",
            format!("{} (fixture)", item["call_id"].as_str().unwrap()),
            item.clone(),
        );
    }
    let calls = openai::responses_tool_calls(&response).unwrap();
    let results = registry.call_all(calls).await;
    check_turn_results("openai responses", &results);
    for (i, item) in openai::responses_reply(&results).unwrap().into_iter().enumerate() {
        cases.add("openai_function_call_output", format!("responses_reply[{i}]"), item);
    }
}

async fn gemini_cases(registry: &ToolRegistry, cases: &mut Cases) {
    for with_ids in [true, false] {
        let turn = gemini_model_turn(with_ids);
        let label = if with_ids { "with ids" } else { "without ids" };
        cases.add("gemini_content", format!("model turn {label} (fixture)"), turn.clone());
        let calls = gemini::tool_calls(&turn).unwrap();
        let results = registry.call_all(calls).await;
        check_turn_results("gemini", &results);
        cases.add(
            "gemini_content",
            format!("reply {label}"),
            gemini::reply(&results).unwrap(),
        );
        for result in &results {
            cases.add(
                "gemini_content",
                format!("reply {label} {}", result.tool()),
                gemini::reply(std::slice::from_ref(result)).unwrap(),
            );
        }
    }
}

async fn mcp_cases(registry: &ToolRegistry, cases: &mut Cases) {
    let mut results = Vec::new();
    for (name, arguments) in turn() {
        let params = json!({"name": name, "arguments": arguments});
        cases.add("mcp_call_tool_params", format!("{name} (fixture)"), params.clone());
        results.push(registry.call_one(mcp::tool_call(&params).unwrap()).await);
    }
    // `arguments` is optional in tools/call.
    let bare = json!({"name": "current_time"});
    cases.add(
        "mcp_call_tool_params",
        "current_time without arguments (fixture)",
        bare.clone(),
    );
    let bare_result = registry.call_one(mcp::tool_call(&bare).unwrap()).await;
    assert!(!bare_result.is_error, "{}", bare_result.text());
    check_turn_results("mcp", &results);
    results.push(bare_result);

    let tools: Vec<_> = registry.tools().collect();
    let output_schemas: BTreeMap<&str, &Value> = tools
        .iter()
        .map(|t| t.definition())
        .filter_map(|d| d.output_schema().map(|s| (d.name(), s.as_value())))
        .collect();
    for (i, result) in results.iter().enumerate() {
        let value = mcp::reply(result);
        // MCP: a tool with an output schema must return structured content
        // that conforms to it.
        if let (Some(schema), false) = (output_schemas.get(result.tool()), result.is_error) {
            let structured = value.get("structuredContent").unwrap_or_else(|| {
                panic!(
                    "{}: a tool with an output schema returned no structuredContent",
                    result.tool()
                )
            });
            cases.instance(
                format!("mcp structuredContent of {} vs outputSchema", result.tool()),
                schema,
                structured,
            );
        }
        cases.add(
            "mcp_call_tool_result",
            format!("call_tool_result[{i}] {}", result.tool()),
            value,
        );
    }
}

// --- binding: what the binder accepts validates against the schema ---------------

/// Argument objects the binder accepts for the probe, strict-valid and lenient.
fn probe_arguments() -> Vec<CallArguments> {
    let json = [
        json!({"pattern": "*.rs"}),
        json!({
            "pattern": "src/**", "case_sensitive": false, "max_results": 10000, "offset": -3,
            "threshold": 0.75, "files": ["a.rs", "b.rs"], "mode": "append",
            "window": {"start": 1, "end": 40}, "labels": {"kind": "code", "owner": "ada"}
        }),
        json!({"pattern": "x", "max_results": 1, "offset": i64::MIN, "threshold": -1e300, "files": [], "labels": {}}),
        json!({"pattern": "x", "offset": i64::MAX, "threshold": 0}),
        // Lenient coercions, one of each kind.
        json!({
            "pattern": "*.md", "case_sensitive": "False", "max_results": "5", "offset": "-7",
            "threshold": "0.5", "files": "a.rs", "mode": "WRITE", "window": "{\"start\": 3}",
            "labels": "{\"k\": \"v\"}"
        }),
        json!({
            "pattern": 42, "case_sensitive": 0, "max_results": 5.0, "offset": 7.9,
            "files": ["a", 3, true], "window": {"start": "10", "end": 20.0}
        }),
        json!({"pattern": true, "case_sensitive": 1, "files": "[\"x\", \"y\"]", "mode": "Read", "window": {"start": 0}}),
        // Renamed keys and unknown keys.
        json!({"pattern": "x", "maxResults": 10, "caseSensitive": "true", "unknown_key": [1, 2]}),
        // null for defaulted parameters, and for optional ones (strict-mode style).
        json!({"pattern": "x", "case_sensitive": null, "max_results": null, "offset": null, "threshold": null,
               "files": null, "mode": null, "window": null, "labels": null}),
        json!({"pattern": "x", "window": {"start": 5, "end": null}}),
    ];
    let mut all: Vec<CallArguments> = json.into_iter().map(CallArguments::Json).collect();
    // Raw text as OpenAI sends it.
    all.push(CallArguments::Text(
        r#"{"pattern": "*.toml", "max_results": "10000", "threshold": 1e-3}"#.to_owned(),
    ));
    all.push(CallArguments::Text(
        "{\"pattern\":\"\\u00e9t\\u00e9\",\"files\":[\"\\ud83d\\ude00.txt\"]}".to_owned(),
    ));
    all
}

/// `value` with every `null` object member left out: the probe echoes
/// `None` as `null`, which the portable schema expresses as absence.
fn without_nulls(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k.clone(), without_nulls(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_nulls).collect()),
        other => other.clone(),
    }
}

async fn binding_cases(registry: &ToolRegistry, cases: &mut Cases) {
    let probe = registry.get("probe").unwrap();
    let portable = probe.definition().input_schema();
    // The strict rewrite itself: the probe's rendered strict definitions fall
    // back to the plain schema (its `labels` map cannot be strict).
    let openai_strict = strict::strict_schema(portable, &strict::OPENAI);
    let anthropic_strict = strict::strict_schema(portable, &strict::ANTHROPIC);
    for (i, arguments) in probe_arguments().into_iter().enumerate() {
        let shown = format!("{arguments:?}");
        let result = registry.call_one(ToolCall::new("probe", arguments)).await;
        assert!(
            !result.is_error,
            "the binder should accept probe arguments #{i} {shown}: {}",
            result.text()
        );
        let echo = result
            .structured_content
            .clone()
            .unwrap_or_else(|| panic!("the probe echoes structured content: {}", result.text()));
        let name = format!("probe arguments #{i}");
        cases.instance(format!("{name} vs input_schema"), portable, &without_nulls(&echo));
        // Strict schemas make optional parameters nullable: the echo, nulls
        // and all, is what a strict model would send.
        cases.instance(format!("{name} vs OpenAI strict schema"), &openai_strict, &echo);
        cases.instance(format!("{name} vs Anthropic strict schema"), &anthropic_strict, &echo);
    }
}

// --- running the validator -----------------------------------------------------

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// What `validate.py` printed, and whether it passed every case.
struct Verdict {
    passed: bool,
    output: String,
}

/// Runs `tests/python/validate.py` over `cases` with the venv's python.
fn run_validator(label: &str, cases: &Cases) -> Verdict {
    let root = repo_root();
    let python = common::python::venv_python(&root);
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos();
    let path = std::env::temp_dir().join(format!("tool-runtime-{label}-{}-{nanos}.json", std::process::id()));
    std::fs::write(&path, serde_json::to_string_pretty(&cases.0).unwrap()).unwrap();
    let out = Command::new(&python)
        .arg(root.join("tests/python/validate.py"))
        .arg(&path)
        .output()
        .expect("run tests/python/validate.py");
    let output = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let verdict = Verdict {
        passed: out.status.success(),
        output,
    };
    if verdict.passed {
        let _ = std::fs::remove_file(&path);
    } else {
        println!(
            "validate.py exited with {}; its cases are kept in {}",
            out.status,
            path.display()
        );
    }
    verdict
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_shape_we_emit_is_accepted_by_the_official_sdk_types() {
    let registry = registry();
    let mut cases = Cases::default();
    definition_cases(&registry, &mut cases);
    anthropic_cases(&registry, &mut cases).await;
    openai_chat_cases(&registry, &mut cases).await;
    openai_responses_cases(&registry, &mut cases).await;
    gemini_cases(&registry, &mut cases).await;
    mcp_cases(&registry, &mut cases).await;
    binding_cases(&registry, &mut cases).await;

    let kinds: HashSet<&str> = cases.0.iter().filter_map(|c| c["kind"].as_str()).collect();
    for kind in [
        "anthropic_tool",
        "anthropic_message",
        "openai_chat_tool",
        "openai_chat_tool_message",
        "openai_responses_tool",
        "openai_function_call_output",
        "gemini_function_declaration",
        "gemini_content",
        "mcp_tool",
        "mcp_call_tool_result",
        "json_schema",
        "instance",
    ] {
        assert!(kinds.contains(kind), "no `{kind}` case");
    }
    let verdict = run_validator("provider-types", &cases);
    assert!(
        verdict.passed,
        "the official SDK types refused some of our shapes:\n{}",
        verdict.output
    );
    assert!(
        verdict
            .output
            .contains(&format!("\n{} passed, 0 failed\n", cases.0.len())),
        "validate.py checked every case:\n{}",
        verdict.output
    );
}

/// The negative control: shapes each SDK type refuses really fail, so a
/// pass above means something (and an SDK upgrade that loosens a check, or a
/// validator that stops checking, shows up here).
#[test]
fn the_validator_refuses_what_the_official_types_refuse() {
    let tool = json!({"name": "t", "description": "d", "input_schema": {"type": "object"}});
    let mut bad = Cases::default();
    let mut with_extra = tool.clone();
    with_extra["input_schema_typo"] = json!({});
    bad.add("anthropic_tool", "unknown top-level key", with_extra);
    bad.add(
        "anthropic_message",
        "unknown key in a tool_result's text block",
        json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "x", "mime": "y"}]}
        ]}),
    );
    bad.add(
        "anthropic_message",
        "image media type",
        json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": [
            {"type": "image", "source": {"type": "base64", "media_type": "image/bmp", "data": "Qk0="}}
        ]}]}),
    );
    bad.add(
        "openai_chat_tool",
        "parameters outside function",
        json!({"type": "function", "function": {"name": "t"}, "parameters": {}}),
    );
    bad.add(
        "openai_chat_tool_message",
        "missing tool_call_id",
        json!({"role": "tool", "content": "x"}),
    );
    bad.add(
        "openai_responses_tool",
        "nested like chat",
        json!({"type": "function", "function": {"name": "t", "parameters": {}}}),
    );
    bad.add(
        "openai_function_call_output",
        "image without a data URL key",
        json!({"type": "function_call_output", "call_id": "c", "output": [{"type": "input_image", "data": "AAAA"}]}),
    );
    bad.add(
        "gemini_function_declaration",
        "uniqueItems is not in Gemini's schema",
        json!({"name": "t", "description": "d", "parameters": {"type": "OBJECT", "properties": {
            "x": {"type": "ARRAY", "items": {"type": "STRING"}, "uniqueItems": true}
        }}}),
    );
    bad.add(
        "gemini_content",
        "inlineData that is not base64",
        json!({"role": "user", "parts": [{"inlineData": {"mimeType": "image/png", "data": "not base64!"}}]}),
    );
    bad.add(
        "mcp_tool",
        "snake_case input_schema",
        json!({"name": "t", "input_schema": {"type": "object"}}),
    );
    bad.add(
        "mcp_call_tool_result",
        "is_error instead of isError",
        json!({"content": [], "is_error": true}),
    );
    bad.add("json_schema", "a type that does not exist", json!({"type": "float"}));
    bad.add(
        "instance",
        "null for a non-nullable property",
        json!({"schema": {"type": "object", "properties": {"a": {"type": "string"}}}, "instance": {"a": null}}),
    );
    let verdict = run_validator("provider-types-negative", &bad);
    assert!(!verdict.passed, "every case should fail:\n{}", verdict.output);
    for case in &bad.0 {
        let line = format!(
            "FAIL {} {}",
            case["kind"].as_str().unwrap(),
            case["name"].as_str().unwrap()
        );
        assert!(
            verdict.output.lines().any(|l| l == line),
            "`{line}` expected:\n{}",
            verdict.output
        );
    }
    assert!(
        verdict
            .output
            .contains(&format!("\n0 passed, {} failed\n", bad.0.len())),
        "{}",
        verdict.output
    );
}

/// Tools mounted from an MCP server written with the official Python SDK
/// (pydantic schemas with `$ref`, `$defs`, `anyOf` with null, titles), in
/// every format, pass the same checks as native tools.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mounted_mcp_tools_are_accepted_by_the_official_sdk_types() {
    let root = repo_root();
    let python = common::python::venv_python(&root);
    let script = root.join("tests/python/mcp_remote_server.py");
    let config = json!({"mcpServers": {"py": {"command": python, "args": [script, "stdio"]}}});
    let config = tool_runtime::mcp::McpConfig::from_json(&config).unwrap();
    let mut registry = ToolRegistry::new();
    tool_runtime::mcp::McpMounts::mount(&mut registry, config)
        .await
        .expect("the Python server mounts");
    assert!(registry.get("py__plan_trip").is_some());
    let mut cases = Cases::default();
    definition_cases(&registry, &mut cases);
    let verdict = run_validator("mounted-tools", &cases);
    assert!(
        verdict.passed,
        "the official SDK types refused some mounted tools' shapes:\n{}",
        verdict.output
    );
}
