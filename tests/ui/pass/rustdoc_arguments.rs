//! Parameter descriptions may come from a rustdoc `# Arguments` list instead
//! of `#[param(description)]`; the text before the first heading is the
//! tool description.

use serde_json::json;
use tool_runtime::{ToolRegistry, tool};

/// Repeat a word a number of times.
///
/// # Arguments
///
/// * `word` - The word to repeat
/// * `times` - How many times to repeat it;
///   continued lines are joined.
///
/// # Errors
///
/// Never.
#[tool]
async fn repeat(word: String, times: u32) -> String {
    word.repeat(times as usize)
}

fn main() {
    let mut registry = ToolRegistry::new();
    registry.register(Repeat).unwrap();

    let tool = registry.get("repeat").unwrap();
    let definition = tool.definition();
    assert_eq!(definition.description(), "Repeat a word a number of times.");
    let schema = definition.input_schema();
    assert_eq!(schema["properties"]["word"]["description"], "The word to repeat");
    assert_eq!(
        schema["properties"]["times"]["description"],
        "How many times to repeat it; continued lines are joined."
    );

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let result = runtime.block_on(registry.call("repeat", json!({"word": "ab", "times": 3})));
    assert!(!result.is_error, "{result:?}");
    assert_eq!(result.text(), "ababab");
}
