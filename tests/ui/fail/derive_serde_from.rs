// #[serde(from = "...")] reads another type than the one the schema describes: refused at the attribute.

use serde::Deserialize;
use tool_runtime::ToolParam;

#[derive(Deserialize)]
struct Raw {
    start: u32,
}

/// A range of lines.
#[derive(Deserialize, ToolParam)]
#[serde(from = "Raw")]
struct Window {
    /// The first line.
    start: u32,
}

impl From<Raw> for Window {
    fn from(raw: Raw) -> Self {
        Window { start: raw.start }
    }
}

fn main() {}
