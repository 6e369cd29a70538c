// A quoted default for a number: the error is at the default and shows it unquoted.

use tool_runtime::tool;

/// List the notes.
#[tool]
async fn list(#[param(description = "Largest number of notes", default = "10")] limit: u32) -> String {
    limit.to_string()
}

fn main() {
    let _ = List;
}
