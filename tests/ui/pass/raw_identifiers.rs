//! Raw identifiers lose their `r#` on the wire: `r#type` is `type`, and a
//! raw function name makes a struct without the prefix.

use serde_json::json;
use tool_runtime::{ToolRegistry, tool};

/// Describe a value of some kind.
///
/// # Arguments
///
/// * `type` - The kind of value
#[tool]
async fn r#match(r#type: String, #[param(description = "The value")] r#ref: String) -> String {
    format!("{}={}", r#type, r#ref)
}

fn main() {
    let mut registry = ToolRegistry::new();
    registry.register(Match).unwrap();

    let tool = registry.get("match").unwrap();
    let schema = tool.definition().input_schema();
    assert_eq!(schema["properties"]["type"]["description"], "The kind of value");
    assert!(schema["properties"].get("ref").is_some(), "{schema}");

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let result = runtime.block_on(registry.call("match", json!({"type": "color", "ref": "red"})));
    assert!(!result.is_error, "{result:?}");
    assert_eq!(result.text(), "color=red");
}
