// A #[param] without `description` still leaves the parameter undescribed.

use tool_runtime::tool;

/// Search the notes for a phrase.
#[tool]
async fn search(
    #[param(description = "What to look for")] query: String,
    #[param(default = 10, min = 1)] limit: u32,
) -> String {
    format!("{query}:{limit}")
}

fn main() {
    let _ = Search;
}
