// A method is not a tool: the error points at `self`.

use tool_runtime::tool;

struct Notes;

impl Notes {
    /// Search the notes for a phrase.
    #[tool]
    async fn search(&self, #[param(description = "What to look for")] query: String) -> String {
        query
    }
}

fn main() {}
