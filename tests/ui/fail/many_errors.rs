// An unknown key, no tool description and an undescribed parameter: all three are reported in one build.

use tool_runtime::tool;

#[tool(nmae = "search")]
async fn search(query: String, #[param(description = "Largest number of results", default = 10)] limit: u32) -> String {
    format!("{query}:{limit}")
}

fn main() {
    let _ = Search;
}
