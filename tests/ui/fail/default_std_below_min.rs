// A bare `default` is `Default::default()`, 0 for an integer, which `min = 1` refuses: the error points at `default`.

use tool_runtime::tool;

/// List the notes.
#[tool]
async fn list(#[param(description = "Largest number of notes", default, min = 1)] limit: u32) -> String {
    limit.to_string()
}

fn main() {
    let _ = List;
}
