// #[param] on a parameter the runtime supplies (ToolContext) is an error.

use tool_runtime::{ToolContext, tool};

/// Report the id of the call.
#[tool]
async fn call_id(#[param(description = "The call")] context: ToolContext) -> String {
    context.call_id().to_owned()
}

fn main() {
    let _ = CallId;
}
