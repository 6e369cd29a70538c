//! A `#[deprecated]` tool: the code `#[tool]` generates calls it without a
//! warning of its own (denied here, so a warning fails the build).

#![deny(deprecated)]

use serde_json::json;
use tool_runtime::{ToolRegistry, tool};

/// Say hello.
#[tool]
#[deprecated(note = "use greet")]
async fn hello(#[param(description = "Who")] name: String) -> String {
    format!("hello {name}")
}

/// Say hello on the blocking pool.
#[tool]
#[deprecated(note = "use greet")]
fn hello_plain(#[param(description = "Who")] name: String) -> String {
    format!("hello {name}")
}

fn main() {
    let mut registry = ToolRegistry::new();
    registry.register(Hello).unwrap();
    registry.register(HelloPlain).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    assert_eq!(
        runtime.block_on(registry.call("hello", json!({"name": "x"}))).text(),
        "hello x"
    );
    assert_eq!(
        runtime
            .block_on(registry.call("hello_plain", json!({"name": "y"})))
            .text(),
        "hello y"
    );
}
