// A `pattern` that does not compile: the error points at the literal and gives the reason.

use tool_runtime::tool;

/// Find a note by its id.
#[tool]
async fn find(#[param(description = "The note's id", pattern = "^[a-z+$")] id: String) -> String {
    id
}

fn main() {
    let _ = Find;
}
