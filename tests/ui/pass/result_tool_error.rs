//! A tool may return `Result<T, ToolError>`: `Ok` is the output, `Err` an
//! error result carrying the message.

use serde_json::json;
use tool_runtime::{ToolError, ToolRegistry, tool};

/// Divide one integer by another.
#[tool]
async fn divide(
    #[param(description = "The dividend")] a: i64,
    #[param(description = "The divisor; not zero")] b: i64,
) -> Result<i64, ToolError> {
    if b == 0 {
        return Err(ToolError::new("cannot divide by zero"));
    }
    Ok(a / b)
}

fn main() {
    let mut registry = ToolRegistry::new();
    registry.register(Divide).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();

    let result = runtime.block_on(registry.call("divide", json!({"a": 84, "b": 2})));
    assert!(!result.is_error, "{result:?}");
    assert_eq!(result.text(), "42");

    let result = runtime.block_on(registry.call("divide", json!({"a": 1, "b": 0})));
    assert!(result.is_error, "{result:?}");
    assert!(result.text().contains("cannot divide by zero"), "{result:?}");
}
