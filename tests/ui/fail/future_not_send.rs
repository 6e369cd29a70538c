// A tool's future must be Send (the registry runs calls on any thread): holding an Rc across an await is refused.
use std::rc::Rc;

use tool_runtime::tool;

/// Count something while holding an `Rc` across an await.
#[tool]
async fn count(#[param(description = "How many")] n: u32) -> u32 {
    let shared = Rc::new(n);
    tokio::task::yield_now().await;
    *shared
}

fn main() {
    let _ = Count;
}
