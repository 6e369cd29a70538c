// `pattern` on a list of numbers: it applies to the innermost value, which is no string.

use tool_runtime::tool;

/// Sum some numbers.
#[tool]
async fn sum(#[param(description = "The numbers", pattern = "^[0-9]+$")] numbers: Vec<i64>) -> i64 {
    numbers.iter().sum()
}

fn main() {
    let _ = Sum;
}
