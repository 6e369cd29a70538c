//! The quick start: three tools, their Anthropic definitions, and one
//! recorded assistant message of `tool_use` blocks answered in order.
//!
//! Run it with `cargo run --example quickstart`.

#[path = "shared/tools.rs"]
mod tools;

use serde_json::json;
use tool_runtime::format::{Format, Selection, anthropic};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let registry = tools::registry();

    let definitions = registry.definitions(Format::Anthropic, &Selection::all());
    println!("== Tool definitions (Anthropic `tools`) ==");
    println!("{}", serde_json::to_string_pretty(&definitions)?);

    // An assistant message as the Messages API returns it: the model sent
    // `"5"` for an integer, a misspelt path, and a stringified object.
    let assistant = json!({
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Let me look around the workspace."},
            {"type": "tool_use", "id": "toolu_01", "name": "search_files",
             "input": {"pattern": "**/*.rs", "maxResults": "5"}},
            {"type": "tool_use", "id": "toolu_02", "name": "read_file",
             "input": {"path": "app/src/mian.rs"}},
            {"type": "tool_use", "id": "toolu_03", "name": "file_issue",
             "input": {"issue": "{\"title\": \"Greeting is not localized\", \"body\": \"main prints hello\", \"priority\": \"Normal\"}"}},
            {"type": "tool_use", "id": "toolu_04", "name": "read_file",
             "input": {"path": "app/src/lib.rs", "max_lines": 0}}
        ]
    });
    let calls = anthropic::tool_calls(&assistant)?;
    let results = registry.call_all(calls).await;
    for result in &results {
        for warning in &result.warnings {
            eprintln!("warning: {}: {warning}", result.tool());
        }
    }
    println!("\n== Reply (`role: \"user\"` message of `tool_result` blocks) ==");
    let reply = anthropic::reply(&results)?;
    println!("{}", serde_json::to_string_pretty(&reply)?);
    Ok(())
}
