//! A plain (non-async) fn is a tool too, and stays callable as written.

use serde_json::json;
use tool_runtime::{ToolRegistry, tool};

/// Add two integers and return their sum.
#[tool]
fn add(#[param(description = "The first addend")] a: i64, #[param(description = "The second addend")] b: i64) -> i64 {
    a + b
}

fn main() {
    assert_eq!(add(2, 3), 5);

    let mut registry = ToolRegistry::new();
    registry.register(Add).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let result = runtime.block_on(registry.call("add", json!({"a": 2, "b": 40})));
    assert!(!result.is_error, "{result:?}");
    assert_eq!(result.text(), "42");
}
