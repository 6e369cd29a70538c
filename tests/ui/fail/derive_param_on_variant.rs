// #[param] on an enum variant has nothing to set: an error at it, never silently ignored.

use serde::Deserialize;
use tool_runtime::ToolParam;

/// How to sort.
#[derive(Deserialize, ToolParam)]
enum Order {
    /// Smallest first.
    #[param(description = "Smallest first")]
    Ascending,
    /// Largest first.
    Descending,
}

fn main() {}
