//! A type that is only returned derives `ToolParam` for its output schema
//! and needs no `Deserialize`: that is checked where a type is a parameter.

use serde::Serialize;
use tool_runtime::{ToolError, ToolParam, ToolRegistry, tool};

/// How full one disk is.
#[derive(Serialize, ToolParam)]
struct Usage {
    /// Where the disk is mounted.
    mount: String,
    /// Used space, in percent.
    used_percent: f64,
}

/// Report how full the root disk is.
#[tool]
async fn disk_usage() -> Result<Usage, ToolError> {
    Ok(Usage { mount: "/".into(), used_percent: 41.5 })
}

fn main() {
    let mut registry = ToolRegistry::new();
    registry.register(DiskUsage).unwrap();
    let tool = registry.get("disk_usage").unwrap();
    let schema = tool.definition().output_schema().expect("an output schema");
    let schema = serde_json::to_value(schema).unwrap();
    assert_eq!(schema["required"], serde_json::json!(["mount", "used_percent"]));
}
