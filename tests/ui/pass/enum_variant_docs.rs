//! A unit-variant enum's description carries its variants' doc comments,
//! by wire name, after the enum's own doc: the model cannot see them
//! otherwise.

use serde::Deserialize;
use tool_runtime::{ToolParam, ToolRegistry, tool};

/// Priority of the task.
#[derive(Debug, Deserialize, ToolParam)]
#[serde(rename_all = "lowercase")]
enum Priority {
    /// Only when idle.
    Low,
    /// The usual.
    Normal,
    /// Before anything
    /// else.
    High,
    Undocumented,
}

// No doc of its own: the variants' docs stand alone.
#[derive(Debug, Deserialize, ToolParam)]
enum Queue {
    /// The shared queue.
    Shared,
    /// Mine alone.
    Private,
}

/// Add tasks.
#[tool]
async fn add(#[param(description = "One priority per task")] priorities: Vec<Priority>) -> String {
    format!("{priorities:?}")
}

fn main() {
    let priority = <Priority as ToolParam>::shape().to_json_schema();
    assert_eq!(
        priority["description"],
        "Priority of the task. low: Only when idle; normal: The usual; high: Before anything else",
        "{priority}"
    );
    let queue = <Queue as ToolParam>::shape().to_json_schema();
    assert_eq!(queue["description"], "Shared: The shared queue; Private: Mine alone", "{queue}");

    let mut registry = ToolRegistry::new();
    registry.register(Add).unwrap();
    let tool = registry.get("add").unwrap();
    let schema = tool.definition().input_schema();
    assert_eq!(
        schema["properties"]["priorities"]["items"]["description"], priority["description"],
        "{schema}"
    );
}
