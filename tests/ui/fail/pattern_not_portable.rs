// A pattern the binder's engine takes but JSON Schema's dialect (ECMA-262) reads otherwise: the error points at the pattern.

use tool_runtime::tool;

/// Look up a user.
#[tool]
async fn user(#[param(description = "The user name", pattern = "(?i)^[a-z]+$")] name: String) -> String {
    name
}

fn main() {}
