// A return type that is neither `Serialize` nor `IntoToolOutput`: one clear error at the type.

use tool_runtime::{ToolError, tool};

struct Report {
    lines: usize,
}

/// Count the lines of a text.
#[tool]
async fn count(#[param(description = "The text")] text: String) -> Result<Report, ToolError> {
    Ok(Report { lines: text.lines().count() })
}

fn main() {
    let _ = Count;
}
