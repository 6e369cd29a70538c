// A quoted default for a number that is no number unquoted either: the
// error says what to write, not the text without its quotes.

use tool_runtime::tool;

/// List the notes.
#[tool]
async fn list(#[param(description = "Largest number of notes", default = "ten")] limit: u32) -> String {
    limit.to_string()
}

fn main() {
    let _ = List;
}
