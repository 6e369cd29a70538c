// A default its own bounds refuse: the error points at the default.

use tool_runtime::tool;

/// List the notes.
#[tool]
async fn list(#[param(description = "Largest number of notes", default = 0, min = 1)] limit: u32) -> String {
    limit.to_string()
}

fn main() {
    let _ = List;
}
