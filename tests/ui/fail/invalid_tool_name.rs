// A wire name outside ^[a-zA-Z0-9_-]{1,64}$: the error points at the literal.

use tool_runtime::tool;

/// Search the notes for a phrase.
#[tool(name = "has space")]
async fn search(#[param(description = "What to look for")] query: String) -> String {
    query
}

fn main() {
    let _ = Search;
}
