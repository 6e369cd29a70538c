// A generic tool has no fixed schema: the error points at the generics.

use tool_runtime::tool;

/// Echo a value back.
#[tool]
async fn echo<T: ToString>(#[param(description = "The value")] value: T) -> String {
    value.to_string()
}

fn main() {
    let _ = Echo;
}
