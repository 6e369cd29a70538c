//! An injected parameter the tool does not use may be `_`: the model never
//! sees its name.

use serde_json::json;
use tool_runtime::{State, ToolContext, ToolRegistry, tool};

struct Db;

/// Echo a word.
#[tool]
async fn echo(#[param(description = "The word")] word: String, _: ToolContext, _: State<Db>) -> String {
    word
}

fn main() {
    let mut registry = ToolRegistry::new().with_state(Db);
    registry.register(Echo).unwrap();
    let tool = registry.get("echo").unwrap();
    let schema = tool.definition().input_schema();
    assert_eq!(schema["required"], json!(["word"]), "{schema}");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    assert_eq!(
        runtime.block_on(registry.call("echo", json!({"word": "hi"}))).text(),
        "hi"
    );
}
