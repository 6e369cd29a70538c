//! A tool may be named like anything `#[tool]` generates beside it
//! (`return_type`, `string_default`, `error_type`, `__run`): the generated
//! dispatcher still calls the user's function, not a helper of that name.

use serde_json::json;
use tool_runtime::{ToolRegistry, tool};

/// A label made from text.
#[derive(serde::Deserialize, serde::Serialize, tool_runtime::ToolParam)]
struct Label(String);

impl From<&str> for Label {
    fn from(text: &str) -> Self {
        Label(text.to_owned())
    }
}

/// Name a return type.
#[tool]
async fn return_type(#[param(description = "A type")] name: String) -> String {
    format!("returns {name}")
}

/// Label something.
#[tool]
async fn string_default(#[param(description = "The label", default = "plain")] label: Label) -> String {
    format!("label {}", label.0)
}

/// Name an error type.
#[tool]
async fn error_type(#[param(description = "A type")] name: String) -> Result<String, String> {
    Ok(format!("errors {name}"))
}

/// Run something.
#[tool]
fn __run(#[param(description = "What to run")] what: String) -> String {
    format!("ran {what}")
}

fn main() {
    let mut registry = ToolRegistry::new();
    registry.register(ReturnType).unwrap();
    registry.register(StringDefault).unwrap();
    registry.register(ErrorType).unwrap();
    registry.register(Run).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let call = |name: &str, args| runtime.block_on(registry.call(name, args)).text();
    assert_eq!(call("return_type", json!({"name": "u8"})), "returns u8");
    assert_eq!(call("string_default", json!({})), "label plain");
    assert_eq!(call("error_type", json!({"name": "E"})), "errors E");
    assert_eq!(call("__run", json!({"what": "it"})), "ran it");
}
