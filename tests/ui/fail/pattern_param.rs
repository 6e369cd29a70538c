// A destructuring pattern has no name for the model: the error points at the pattern.

use tool_runtime::tool;

/// Add two small numbers.
#[tool]
async fn add((a, b): (u8, u8)) -> u16 {
    a as u16 + b as u16
}

fn main() {
    let _ = Add;
}
