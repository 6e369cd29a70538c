//! Only the runtime's `State<T>` is injected: another type named `State`
//! (here `geo::State<String>`) is a parameter the model fills in.

use serde_json::json;
use tool_runtime::{State, ToolRegistry, tool};

mod geo {
    use serde::Deserialize;
    use tool_runtime::ToolParam;

    /// A state of a country.
    #[derive(Debug, Deserialize, ToolParam)]
    pub struct State<T> {
        /// Its name.
        pub name: T,
    }
}

/// How often the registry was asked.
struct Asked(u32);

/// Say where a state is.
#[tool]
async fn locate(#[param(description = "The state to find")] state: geo::State<String>, asked: State<Asked>) -> String {
    format!("{} ({})", state.name, asked.0)
}

fn main() {
    let mut registry = ToolRegistry::new().with_state(Asked(7));
    registry.register(Locate).unwrap();

    let tool = registry.get("locate").unwrap();
    let schema = tool.definition().input_schema();
    let properties = schema["properties"].as_object().unwrap();
    assert_eq!(properties.keys().collect::<Vec<_>>(), ["state"], "{schema}");

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let result = runtime.block_on(registry.call("locate", json!({"state": {"name": "Ohio"}})));
    assert!(!result.is_error, "{result:?}");
    assert_eq!(result.text(), "Ohio (7)");
}
