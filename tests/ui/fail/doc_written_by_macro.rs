// A doc comment written by a macro reaches #[tool] unexpanded: an error at it, not a silently shorter description.

use tool_runtime::tool;

/// Count the words of a text.
#[doc = concat!("Use it for ", "prose.")]
#[tool]
async fn count(#[param(description = "The text")] text: String) -> usize {
    text.split_whitespace().count()
}

fn main() {
    let _ = Count;
}
