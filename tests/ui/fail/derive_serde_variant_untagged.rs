// An untagged unit variant is read from `null`, not from the name the schema lists: refused at the attribute.

use serde::Deserialize;
use tool_runtime::ToolParam;

/// How to sort.
#[derive(Deserialize, ToolParam)]
enum Order {
    /// Smallest first.
    Ascending,
    /// As found.
    #[serde(untagged)]
    Unsorted,
}

fn main() {}
