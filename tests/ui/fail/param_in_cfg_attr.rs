// `param` inside `cfg_attr` is invisible to `#[tool]`: one error at it.

use tool_runtime::tool;

/// Count the words of a text.
#[tool]
async fn count(#[cfg_attr(all(), param(description = "The text"))] text: String) -> usize {
    text.split_whitespace().count()
}

fn main() {
    let _ = Count;
}
