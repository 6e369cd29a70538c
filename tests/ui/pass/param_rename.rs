//! `#[param(rename = "...")]` changes the name the model sends; the Rust
//! parameter keeps its own.

use serde_json::json;
use tool_runtime::{ToolRegistry, tool};

/// Move a file to a new path.
#[tool]
async fn move_file(
    #[param(description = "The file to move", rename = "from")] source: String,
    #[param(description = "Where to put it", rename = "to")] destination: String,
) -> String {
    format!("{source} -> {destination}")
}

fn main() {
    let mut registry = ToolRegistry::new();
    registry.register(MoveFile).unwrap();

    let tool = registry.get("move_file").unwrap();
    let schema = tool.definition().input_schema();
    assert!(schema["properties"].get("from").is_some(), "{schema}");
    assert!(schema["properties"].get("source").is_none(), "{schema}");

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let result = runtime.block_on(registry.call("move_file", json!({"from": "a.rs", "to": "b.rs"})));
    assert!(!result.is_error, "{result:?}");
    assert_eq!(result.text(), "a.rs -> b.rs");
}
