// A bare `default` is `Default::default()`, an empty list, which `min_items = 1` refuses: the error points at `default`.

use tool_runtime::tool;

/// Add up numbers.
#[tool]
async fn sum(#[param(description = "The numbers to add", default, min_items = 1)] numbers: Vec<i64>) -> i64 {
    numbers.iter().sum()
}

fn main() {
    let _ = Sum;
}
