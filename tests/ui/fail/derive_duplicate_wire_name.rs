// Two fields or two variants that serde reads under one name: an error at the second one's rename, or at its name when a rule gives the clash.

use serde::Deserialize;
use tool_runtime::ToolParam;

/// A range of lines.
#[derive(Deserialize, ToolParam)]
#[serde(rename_all = "camelCase")]
struct Window {
    /// The first line.
    start_line: u32,
    /// The first line again.
    #[serde(rename = "startLine")]
    first: u32,
    /// The last line.
    end_line: u32,
    /// The last line, spelt otherwise.
    #[allow(non_snake_case)]
    endLine: u32,
    /// Written as the first line, read as its own.
    #[serde(rename(serialize = "startLine"))]
    written_only: u32,
}

/// How urgent a task is.
#[derive(Deserialize, ToolParam)]
#[serde(rename_all = "lowercase")]
enum Urgency {
    /// Only when idle.
    Low,
    /// Before anything else.
    #[serde(rename = "low")]
    High,
    /// Written as the lowest, read as its own.
    #[serde(rename(serialize = "low"))]
    Soon,
    /// Also before anything else.
    Urgent,
    /// As urgent, in capitals.
    #[allow(non_camel_case_types)]
    URGENT,
}

fn main() {}
