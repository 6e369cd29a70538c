// `min_length` on an integer: a string bound on a number.

use tool_runtime::tool;

/// List the notes.
#[tool]
async fn list(#[param(description = "Largest number of notes", min_length = 1)] limit: u32) -> String {
    limit.to_string()
}

fn main() {
    let _ = List;
}
