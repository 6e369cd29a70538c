//! A plain (non-async) fn is a tool too, and stays callable as written.

use serde_json::json;
use tool_runtime::{ToolRegistry, tool};

/// Add two integers and return their sum.
#[tool]
fn add(#[param(description = "The first addend")] a: i64, #[param(description = "The second addend")] b: i64) -> i64 {
    a + b
}

/// Parse a number.
///
/// Returns the error idiom of ordinary code, which is not `Send`: only the
/// output crosses from the blocking thread.
#[tool]
fn parse(#[param(description = "The text")] text: String) -> Result<i64, Box<dyn std::error::Error>> {
    Ok(text.trim().parse::<i64>()?)
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

    registry.register(Parse).unwrap();
    let result = runtime.block_on(registry.call("parse", json!({"text": " 7 "})));
    assert_eq!(result.text(), "7", "{result:?}");
    let result = runtime.block_on(registry.call("parse", json!({"text": "seven"})));
    assert!(result.is_error, "{result:?}");
    assert!(result.text().contains("invalid digit"), "{result:?}");
}
