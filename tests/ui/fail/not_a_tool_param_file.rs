// A type that can never be a tool parameter: the error names the type and points at it.

use tool_runtime::tool;

/// Read a file.
#[tool]
async fn read(#[param(description = "The file")] file: std::fs::File) -> String {
    format!("{file:?}")
}

fn main() {
    let _ = Read;
}
