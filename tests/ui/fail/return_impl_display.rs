// An `impl Trait` return type that is neither `Serialize` nor `IntoToolOutput`: one error at the type, not a failure at every call.

use tool_runtime::tool;

/// Count the words of a text.
#[tool]
async fn count(#[param(description = "The text")] text: String) -> impl std::fmt::Display {
    text.split_whitespace().count()
}

fn main() {
    let _ = Count;
}
