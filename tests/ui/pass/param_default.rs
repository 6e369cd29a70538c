//! `#[param(default)]` uses `Default::default()`; `#[param(default = EXPR)]`
//! uses the expression (a string literal converts with `Into`).

use serde_json::json;
use tool_runtime::{ToolRegistry, tool};

/// List the labels of a branch.
#[tool]
async fn labels(
    #[param(description = "Labels to start with", default)] labels: Vec<String>,
    #[param(description = "Branch to read", default = "main")] branch: String,
    #[param(description = "Largest number of labels", default = 10)] limit: u32,
) -> String {
    format!("{branch}:{}:{limit}", labels.len())
}

fn main() {
    let mut registry = ToolRegistry::new();
    registry.register(Labels).unwrap();

    let tool = registry.get("labels").unwrap();
    let schema = tool.definition().input_schema();
    assert!(
        schema.get("required").is_none_or(|r| r.as_array().unwrap().is_empty()),
        "{schema}"
    );

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let result = runtime.block_on(registry.call("labels", json!({})));
    assert!(!result.is_error, "{result:?}");
    assert_eq!(result.text(), "main:0:10");

    let result = runtime.block_on(registry.call("labels", json!({"labels": ["a", "b"], "branch": "dev", "limit": 3})));
    assert!(!result.is_error, "{result:?}");
    assert_eq!(result.text(), "dev:2:3");
}
