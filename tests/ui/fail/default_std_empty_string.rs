// A bare `default` is `Default::default()`, an empty string, which `min_length = 1` refuses: the error points at `default`.

use tool_runtime::tool;

/// Greet someone.
#[tool]
async fn greet(#[param(description = "Whom to greet", default, min_length = 1)] name: String) -> String {
    format!("Hello, {name}")
}

fn main() {
    let _ = Greet;
}
