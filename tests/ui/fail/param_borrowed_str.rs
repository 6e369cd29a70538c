// A borrowed parameter: one error at the type, naming the owned type to use.

use tool_runtime::tool;

/// Set the title of the page.
#[tool]
async fn set_title(#[param(description = "The new title")] title: &str) -> String {
    title.to_owned()
}

fn main() {
    let _ = SetTitle;
}
