// An `unsafe fn` is no tool: the error points at `unsafe`.

use tool_runtime::tool;

/// Wipe the cache.
#[tool]
async unsafe fn wipe() -> String {
    String::new()
}

fn main() {}
