//! A function name whose UpperCamelCase would start with a digit keeps one
//! leading underscore for its struct (`_3d_view` -> `_3dView`), instead of
//! a panic in the macro.

use serde_json::json;
use tool_runtime::{ToolRegistry, tool};

/// Show a model in 3D.
#[tool]
async fn _3d_view(#[param(description = "The model")] model: String) -> String {
    format!("viewing {model}")
}

fn main() {
    let mut registry = ToolRegistry::new();
    registry.register(_3dView).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let result = runtime.block_on(registry.call("_3d_view", json!({"model": "cube"})));
    assert_eq!(result.text(), "viewing cube");
}
