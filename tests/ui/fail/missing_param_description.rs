// A model-visible parameter with no description: the error points at its name.

use tool_runtime::tool;

/// Search the notes for a phrase.
#[tool]
async fn search(#[param(description = "What to look for")] query: String, limit: u32) -> String {
    format!("{query}:{limit}")
}

fn main() {
    let _ = Search;
}
