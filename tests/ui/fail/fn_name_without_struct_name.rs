// A function name that gives no struct name (`__` has no letters): an error at the name, not a panic.

use tool_runtime::tool;

/// Do nothing much.
#[tool(name = "nothing")]
async fn __() -> String {
    String::new()
}

fn main() {}
