// An integer parameter's bound must be a whole number: the error points at the bound.

use tool_runtime::tool;

/// List the notes.
#[tool]
async fn list(#[param(description = "Largest number of notes", min = 0.5)] limit: u32) -> String {
    limit.to_string()
}

fn main() {
    let _ = List;
}
