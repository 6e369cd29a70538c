// A borrowed slice, even inside an `Option`: one error at the reference.

use tool_runtime::tool;

/// Tag the page.
#[tool]
async fn tag(#[param(description = "The tags to add")] tags: Option<&[String]>) -> String {
    tags.unwrap_or_default().join(",")
}

fn main() {
    let _ = Tag;
}
