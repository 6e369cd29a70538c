// A `# Arguments` entry that names no parameter: the error points at its doc line and names the close one.

use tool_runtime::tool;

/// Search the notes for a phrase.
///
/// # Arguments
///
/// * `qeury` - What to look for
#[tool]
async fn search(query: String) -> String {
    query
}

fn main() {
    let _ = Search;
}
