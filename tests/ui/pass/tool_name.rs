//! `#[tool(name = "...")]` changes the wire name only: the function and the
//! generated struct keep the Rust names.

use serde_json::json;
use tool_runtime::{ToolRegistry, tool};

/// Say hello to someone.
#[tool(name = "say-hello_v2")]
async fn greet(#[param(description = "Who to greet")] name: String) -> String {
    format!("Hello, {name}!")
}

fn main() {
    let mut registry = ToolRegistry::new();
    registry.register(Greet).unwrap();
    assert_eq!(registry.names(), ["say-hello_v2"]);
    assert!(registry.get("greet").is_none());

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    assert_eq!(runtime.block_on(greet("Ada".into())), "Hello, Ada!");
    let result = runtime.block_on(registry.call("say-hello_v2", json!({"name": "Ada"})));
    assert!(!result.is_error, "{result:?}");
    assert_eq!(result.text(), "Hello, Ada!");
}
