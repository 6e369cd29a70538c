// A struct without #[derive(ToolParam)]: the error names the type and points at it.

use serde::Deserialize;
use tool_runtime::tool;

#[derive(Deserialize)]
struct Window {
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
