// An `impl Trait` parameter is a hidden generic: one error at the type, and no follow-on errors.

use tool_runtime::tool;

/// Greet someone.
#[tool]
async fn greet(#[param(description = "Whom to greet")] name: impl Into<String>) -> String {
    format!("Hello, {}", name.into())
}

fn main() {
    let _ = Greet;
}
