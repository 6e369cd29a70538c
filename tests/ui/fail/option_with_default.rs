// An `Option` parameter is already optional: a default on it is an error at the default.

use tool_runtime::tool;

/// Search the notes for a phrase.
#[tool]
async fn search(
    #[param(description = "What to look for")] query: String,
    #[param(description = "Only this folder", default = "notes")] folder: Option<String>,
) -> String {
    format!("{query}:{folder:?}")
}

fn main() {
    let _ = Search;
}
