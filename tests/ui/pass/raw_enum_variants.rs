//! A raw-identifier enum variant is named without its `r#` in the schema,
//! as serde names it.

use serde_json::json;
use tool_runtime::{ToolParam, ToolRegistry, tool};

/// What kind of item.
#[derive(serde::Deserialize, ToolParam)]
#[allow(non_camel_case_types)]
enum Kind {
    /// A type.
    r#type,
    /// A function.
    r#fn,
    /// Anything else.
    other,
}

/// Find items of a kind.
#[tool]
async fn find(#[param(description = "The kind")] kind: Kind) -> String {
    let found = match kind {
        Kind::r#type => "a type",
        Kind::r#fn => "a function",
        Kind::other => "something else",
    };
    found.to_owned()
}

fn main() {
    let mut registry = ToolRegistry::new();
    registry.register(Find).unwrap();
    let tool = registry.get("find").unwrap();
    let schema = tool.definition().input_schema();
    assert_eq!(
        schema["properties"]["kind"]["enum"],
        json!(["type", "fn", "other"]),
        "{schema}"
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let result = runtime.block_on(registry.call("find", json!({"kind": "type"})));
    assert!(!result.is_error, "{result:?}");
    assert_eq!(result.text(), "a type");
}
