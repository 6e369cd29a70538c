// A list default whose items can be counted is checked against the item bounds: the error points at the default.

use tool_runtime::tool;

/// Add up numbers.
#[tool]
async fn sum(#[param(description = "The numbers to add", default = vec![1, 2, 3], max_items = 2)] numbers: Vec<i64>) -> i64 {
    numbers.iter().sum()
}

fn main() {
    let _ = Sum;
}
