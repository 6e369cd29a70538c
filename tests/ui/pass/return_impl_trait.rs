//! An `impl Trait` return type that has a reading (`Serialize`,
//! `IntoToolOutput`) is checked where its value is at hand and shown as
//! that reading, from an `async fn`, a plain `fn`, or inside a `Result`.

use serde::Serialize;
use serde_json::json;
use tool_runtime::{IntoToolOutput, ToolRegistry, tool};

/// List some numbers.
#[tool]
async fn numbers() -> impl Serialize {
    vec![1, 2]
}

/// List some numbers on the blocking pool.
#[tool]
fn numbers_plain() -> impl Serialize {
    vec![3, 4]
}

/// Greet, or fail.
#[tool]
async fn greet(#[param(description = "Fail instead")] fail: bool) -> Result<impl IntoToolOutput, String> {
    if fail {
        Err("no".to_owned())
    } else {
        Ok("hello".to_owned())
    }
}

fn main() {
    let mut registry = ToolRegistry::new();
    registry.register(Numbers).unwrap();
    registry.register(NumbersPlain).unwrap();
    registry.register(Greet).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let call = |name: &str, args| runtime.block_on(registry.call(name, args));
    assert_eq!(call("numbers", json!({})).structured_content, Some(json!([1, 2])));
    assert_eq!(call("numbers_plain", json!({})).structured_content, Some(json!([3, 4])));
    assert_eq!(call("greet", json!({"fail": false})).text(), "hello");
    let failed = call("greet", json!({"fail": true}));
    assert!(failed.is_error, "{failed:?}");
    assert_eq!(failed.text(), "no");
}
