// A string default for an enum: the error is at the default and shows how to write it.

use serde::Deserialize;
use tool_runtime::{ToolParam, tool};

/// How urgent a task is.
#[derive(Debug, Deserialize, ToolParam)]
#[serde(rename_all = "lowercase")]
enum Priority {
    /// Only when idle.
    Low,
    /// The usual.
    Normal,
}

/// Add a task.
#[tool]
async fn add(#[param(description = "How urgent", default = "normal")] priority: Priority) -> String {
    format!("{priority:?}")
}

fn main() {
    let _ = Add;
}
