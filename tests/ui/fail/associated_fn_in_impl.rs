// `#[tool]` on an associated function (no `self`) in an `impl` block: one
// error at the function, saying to move it out.

use tool_runtime::tool;

struct Notes;

impl Notes {
    /// Search the notes for a phrase.
    #[tool]
    async fn search(#[param(description = "What to look for")] query: String) -> String {
        query
    }
}

fn main() {
    let _ = Notes::search(String::new());
}
