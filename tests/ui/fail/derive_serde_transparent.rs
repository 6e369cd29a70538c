// #[serde(transparent)] reads one field's value alone: on a struct with another field (one serde skips), refused at the attribute.

use serde::Deserialize;
use tool_runtime::ToolParam;

/// A note's identifier.
#[derive(Deserialize, ToolParam)]
#[serde(transparent)]
struct NoteId {
    /// The identifier.
    id: String,
    #[serde(skip)]
    cached: Option<u64>,
}

fn main() {}
