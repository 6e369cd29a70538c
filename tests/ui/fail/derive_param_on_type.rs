// #[param] on the derived type itself takes only `crate`: another key is an error, never silently ignored.

use serde::Deserialize;
use tool_runtime::ToolParam;

/// A range of lines.
#[derive(Deserialize, ToolParam)]
#[param(description = "A range", min = 1)]
struct Window {
    /// The first line.
    start: u32,
}

fn main() {}
