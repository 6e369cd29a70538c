// Two parameters with the wire name `a`: the error points at the rename.

use tool_runtime::tool;

/// Copy a file.
#[tool]
async fn copy_file(
    #[param(description = "The source path")] a: String,
    #[param(description = "The destination path", rename = "a")] b: String,
) -> String {
    format!("{a} -> {b}")
}

fn main() {
    let _ = CopyFile;
}
