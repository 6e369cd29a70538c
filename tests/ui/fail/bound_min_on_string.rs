// `min` on a string: a numeric bound on a string.

use tool_runtime::tool;

/// Find notes.
#[tool]
async fn find(#[param(description = "What to look for", min = 1)] query: String) -> String {
    query
}

fn main() {
    let _ = Find;
}
