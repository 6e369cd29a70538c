// The items of a list default are held to the bounds of the list's values: the error points at the default.

use tool_runtime::tool;

/// Add up numbers.
#[tool]
async fn sum(#[param(description = "The numbers to add", default = vec![2, 0], min = 1)] numbers: Vec<u32>) -> u32 {
    numbers.iter().sum()
}

fn main() {}
