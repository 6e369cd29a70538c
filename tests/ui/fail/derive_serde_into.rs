// #[serde(into = "...")] writes another type than the one the output schema describes: refused at the attribute.

use serde::{Deserialize, Serialize};
use tool_runtime::ToolParam;

/// A range of lines.
#[derive(Clone, Deserialize, Serialize, ToolParam)]
#[serde(into = "String")]
struct Window {
    /// The first line.
    start: u32,
}

impl From<Window> for String {
    fn from(window: Window) -> Self {
        window.start.to_string()
    }
}

fn main() {}
