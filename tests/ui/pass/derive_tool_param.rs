//! `#[derive(ToolParam)]` makes a struct with documented fields, or an enum
//! of unit variants, usable as a tool parameter.

use serde::Deserialize;
use serde_json::json;
use tool_runtime::{ToolParam, ToolRegistry, tool};

/// A range of lines.
#[derive(Debug, Deserialize, ToolParam)]
struct Window {
    /// The first line.
    start: u32,
    /// The last line; the end of the file when absent.
    end: Option<u32>,
}

/// How to sort the lines.
#[derive(Debug, Deserialize, ToolParam)]
#[serde(rename_all = "lowercase")]
enum Order {
    /// As they are.
    Keep,
    /// Last line first.
    Reverse,
}

/// Describe a window of lines.
#[tool]
async fn show_window(
    #[param(description = "The lines to look at")] window: Window,
    #[param(description = "How to sort them")] order: Order,
) -> String {
    format!("{}..{:?} {order:?}", window.start, window.end)
}

fn main() {
    let mut registry = ToolRegistry::new();
    registry.register(ShowWindow).unwrap();

    let tool = registry.get("show_window").unwrap();
    let schema = tool.definition().input_schema();
    assert_eq!(
        schema["properties"]["order"]["enum"],
        json!(["keep", "reverse"]),
        "{schema}"
    );

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let result = runtime.block_on(registry.call("show_window", json!({"window": {"start": 3}, "order": "reverse"})));
    assert!(!result.is_error, "{result:?}");
    assert_eq!(result.text(), "3..None Reverse");
}
