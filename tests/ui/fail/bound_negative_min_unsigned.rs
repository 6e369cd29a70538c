// A negative `min` on an unsigned type: the schema would advertise values the type refuses.

use tool_runtime::tool;

/// Move the cursor.
#[tool]
async fn step(#[param(description = "How far to move", min = -5)] by: u32) -> String {
    by.to_string()
}

fn main() {
    let _ = Step;
}
