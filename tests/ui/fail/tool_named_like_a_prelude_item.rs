// A tool whose struct would hide a prelude name (`fn result` ->
// `struct Result`) is an error at the name, and no struct is emitted, so
// the signature's own `Result` still names the prelude's.

use tool_runtime::{ToolError, tool};

/// Fetch the result of a job.
#[tool]
async fn result(#[param(description = "The job's id")] id: String) -> Result<String, ToolError> {
    Ok(id)
}

fn main() {
    let _: Option<Result<String, ToolError>> = None;
}
