// A parameter type of the user's named like a standard one (`Value`) without `Deserialize`: the error is at the parameter's type, as for any other name.

use tool_runtime::{ToolParam, tool};

/// How loud to play.
#[derive(ToolParam)]
enum Value {
    /// Quietly.
    Low,
    /// Loudly.
    High,
}

/// Play a sound.
#[tool]
async fn play(#[param(description = "How loud")] volume: Value) -> String {
    matches!(volume, Value::High).to_string()
}

fn main() {
    let _ = Play;
}
