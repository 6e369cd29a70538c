// No doc comment and no #[tool(description)]: the error points at the fn name.

use tool_runtime::tool;

#[tool]
async fn search(#[param(description = "What to look for")] query: String) -> String {
    query
}

fn main() {
    let _ = Search;
}
