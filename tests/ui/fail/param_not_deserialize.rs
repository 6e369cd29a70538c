// A derived parameter type without `Deserialize`: the first error says so, at the parameter's type.

use tool_runtime::{ToolParam, tool};

/// A range of lines.
#[derive(ToolParam)]
struct Window {
    /// The first line.
    start: u32,
}

/// Read some lines of a file.
#[tool]
async fn read_lines(#[param(description = "The lines to read")] window: Window) -> String {
    window.start.to_string()
}

fn main() {
    let _ = ReadLines;
}
