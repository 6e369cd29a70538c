// `min` above `max`: no value could pass.

use tool_runtime::tool;

/// List the notes.
#[tool]
async fn list(#[param(description = "Largest number of notes", min = 10, max = 1)] limit: u32) -> String {
    limit.to_string()
}

fn main() {
    let _ = List;
}
