// A wire name of 68 characters, over the limit of 64.

use tool_runtime::tool;

/// Search the notes for a phrase.
#[tool(name = "search_the_notes_for_a_phrase_and_return_every_match_found_anywhere")]
async fn search(#[param(description = "What to look for")] query: String) -> String {
    query
}

fn main() {
    let _ = Search;
}
