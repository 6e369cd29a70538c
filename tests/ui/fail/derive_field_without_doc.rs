// #[derive(ToolParam)] on a struct with an undescribed field: the error points at the field.

use serde::Deserialize;
use tool_runtime::{ToolParam, tool};

/// A range of lines.
#[derive(Deserialize, ToolParam)]
struct Window {
    /// The first line.
    start: u32,
    end: u32,
}

/// Read some lines of a file.
#[tool]
async fn read_lines(#[param(description = "The lines to read")] window: Window) -> String {
    format!("{}..{}", window.start, window.end)
}

fn main() {
    let _ = ReadLines;
}
