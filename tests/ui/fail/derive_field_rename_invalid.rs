// A struct field serde renames to a name providers refuse: the error points at the rename.

use serde::Deserialize;
use tool_runtime::ToolParam;

/// A filter.
#[derive(Deserialize, ToolParam)]
struct Filter {
    /// The record id.
    #[serde(rename = "filter[id]")]
    id: u64,
}

fn main() {}
