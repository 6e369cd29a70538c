// A generic derived parameter type without `Deserialize`: the first error
// is at the parameter's type, naming `Deserialize` (the call that registers
// the tool is refused too).

use tool_runtime::{ToolParam, ToolRegistry, tool};

/// One page of results.
#[derive(ToolParam)]
struct Page<T> {
    /// The items.
    items: Vec<T>,
}

/// Sum a page of numbers.
#[tool]
async fn sum(#[param(description = "The numbers")] page: Page<u32>) -> u32 {
    page.items.iter().sum()
}

fn main() {
    let mut registry = ToolRegistry::new();
    registry.register(Sum).unwrap();
}
