// `cfg` on a parameter is applied after the macro: one error at it, telling to gate the whole tool.

use tool_runtime::tool;

/// Count the words of a text.
#[tool]
async fn count(
    #[param(description = "The text")] text: String,
    #[cfg(any())]
    #[param(description = "Only this many")]
    limit: u32,
) -> usize {
    text.split_whitespace().count()
}

fn main() {
    let _ = Count;
}
