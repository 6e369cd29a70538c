//! `#[param(...)]` bounds on a newtype's field apply to the newtype: in its
//! schema, and enforced by the binder.

use serde_json::json;
use tool_runtime::{ToolParam, ToolRegistry, tool};

/// A share of a whole, in percent.
#[derive(serde::Deserialize, ToolParam)]
struct Percent(#[param(min = 0, max = 100)] u8);

/// Set the volume.
#[tool]
async fn set_volume(#[param(description = "The new volume")] volume: Percent) -> String {
    format!("volume {}", volume.0)
}

fn main() {
    let mut registry = ToolRegistry::new();
    registry.register(SetVolume).unwrap();
    let tool = registry.get("set_volume").unwrap();
    let schema = tool.definition().input_schema();
    assert_eq!(schema["properties"]["volume"]["maximum"], 100, "{schema}");

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let result = runtime.block_on(registry.call("set_volume", json!({"volume": 50})));
    assert_eq!(result.text(), "volume 50");
    let result = runtime.block_on(registry.call("set_volume", json!({"volume": 150})));
    assert!(result.is_error, "{result:?}");
    assert_eq!(result.error_codes(), ["out_of_range:volume"]);
    let result = runtime.block_on(registry.call("set_volume", r#"{"volume": 150}"#));
    assert_eq!(result.error_codes(), ["out_of_range:volume"]);
}
