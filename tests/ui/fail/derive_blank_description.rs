// A derived field's blank description is none, as a tool parameter's is: the error points at the field.

use serde::Deserialize;
use tool_runtime::ToolParam;

/// A range of lines.
#[derive(Deserialize, ToolParam)]
struct Window {
    /// The first line.
    start: u32,
    #[param(description = " ")]
    end: u32,
}

fn main() {}
