// `min_items` on a plain value: item bounds need a list, set or map.

use tool_runtime::tool;

/// Roll a die.
#[tool]
async fn roll(#[param(description = "Number of sides", min_items = 1)] sides: Option<u8>) -> String {
    sides.unwrap_or(6).to_string()
}

fn main() {
    let _ = Roll;
}
