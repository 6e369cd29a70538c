// A parameter whose name is not ASCII has no valid wire name: the error points at the name.

use tool_runtime::tool;

/// Resize an image.
#[tool]
async fn resize(#[param(description = "The new size")] größe: u32) -> u32 {
    größe
}

fn main() {
    let _ = Resize;
}
