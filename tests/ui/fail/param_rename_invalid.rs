// A wire name providers refuse as a property key: the error points at the rename.

use tool_runtime::tool;

/// Find records.
#[tool]
async fn find(#[param(description = "The record id", rename = "filter[id]")] id: u64) -> u64 {
    id
}

fn main() {
    let _ = Find;
}
