// An error type without `Display` has no message for the model: one error at the type.

use tool_runtime::tool;

#[derive(Debug)]
struct Failure;

/// Count the words of a text.
#[tool]
async fn count(#[param(description = "The text")] text: String) -> Result<usize, Failure> {
    Ok(text.split_whitespace().count())
}

fn main() {
    let _ = Count;
}
