// On a derived struct's field too, a bound must fit the field's type.

use serde::Deserialize;
use tool_runtime::{ToolParam, tool};

/// A range of lines.
#[derive(Deserialize, ToolParam)]
struct Window {
    /// The first line.
    #[param(pattern = "^[0-9]+$")]
    start: u32,
}

/// Read some lines.
#[tool]
async fn read(#[param(description = "The lines")] window: Window) -> String {
    window.start.to_string()
}

fn main() {
    let _ = Read;
}
