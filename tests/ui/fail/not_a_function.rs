// #[tool] on something that is not a function.

use tool_runtime::tool;

/// Not a function.
#[tool]
struct Search;

fn main() {
    let _ = Search;
}
