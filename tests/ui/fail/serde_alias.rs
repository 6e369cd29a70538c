// A serde alias would let a typed parse accept a name the schema never shows: refused.
use serde::Deserialize;
use tool_runtime::ToolParam;

/// A range of lines.
#[derive(Deserialize, ToolParam)]
struct Window {
    /// The first line.
    #[serde(alias = "begin")]
    start: u32,
}

fn main() {}
