//! `ToolContext` and `State<T>` parameters are supplied by the runtime and
//! never appear in the schema.

use std::sync::atomic::{AtomicU32, Ordering};

use serde_json::json;
use tool_runtime::{State, ToolCall, ToolContext, ToolRegistry, tool};

/// A counter the registry holds as shared state.
struct Counter(AtomicU32);

/// Add to the shared counter and report the call it came from.
#[tool]
async fn bump(
    #[param(description = "How much to add")] by: u32,
    context: ToolContext,
    counter: State<Counter>,
) -> String {
    let now = counter.0.fetch_add(by, Ordering::SeqCst) + by;
    format!("{}:{}:{now}", context.tool_name(), context.call_id())
}

/// The types handed through a `macro_rules!` fragment (`$t:ty`), which
/// wraps them in an invisible group, are injected all the same.
macro_rules! peek_tool {
    ($context:ty, $state:ty) => {
        /// Read the shared counter.
        #[tool]
        async fn peek(context: $context, counter: $state) -> String {
            format!("{}:{}", context.tool_name(), counter.0.load(Ordering::SeqCst))
        }
    };
}

peek_tool!(ToolContext, State<Counter>);

fn main() {
    let mut registry = ToolRegistry::new().with_state(Counter(AtomicU32::new(0)));
    registry.register(Bump).unwrap();
    registry.register(Peek).unwrap();
    let peek = registry.get("peek").unwrap();
    assert_eq!(peek.definition().input_schema()["properties"], json!({}));

    let tool = registry.get("bump").unwrap();
    let schema = tool.definition().input_schema();
    let properties = schema["properties"].as_object().unwrap();
    assert_eq!(properties.keys().collect::<Vec<_>>(), ["by"], "{schema}");

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let result = runtime.block_on(registry.call_one(ToolCall::new("bump", json!({"by": 2})).with_id("c1")));
    assert!(!result.is_error, "{result:?}");
    assert_eq!(result.text(), "bump:c1:2");
    let result = runtime.block_on(registry.call_one(ToolCall::new("bump", json!({"by": 3})).with_id("c2")));
    assert_eq!(result.text(), "bump:c2:5");
    assert_eq!(runtime.block_on(registry.call("peek", json!({}))).text(), "peek:5");
}
