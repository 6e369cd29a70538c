// A plain `fn` returning a future: the future would never be awaited; one error at the return type.

use std::future::Future;

use tool_runtime::tool;

/// Count the words of a text.
#[tool]
fn count(#[param(description = "The text")] text: String) -> impl Future<Output = usize> {
    async move { text.split_whitespace().count() }
}

fn main() {
    let _ = Count;
}
