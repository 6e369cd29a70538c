// A misspelled key in #[tool(...)]: darling names the key and suggests the right one.

use tool_runtime::tool;

/// Search the notes for a phrase.
#[tool(descripton = "Search the notes.")]
async fn search(#[param(description = "What to look for")] query: String) -> String {
    query
}

fn main() {
    let _ = Search;
}
