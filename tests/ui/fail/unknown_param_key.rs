// A misspelled key in #[param(...)]: darling names the key and suggests the right one.

use tool_runtime::tool;

/// Search the notes for a phrase.
#[tool]
async fn search(#[param(descripton = "What to look for")] query: String) -> String {
    query
}

fn main() {
    let _ = Search;
}
