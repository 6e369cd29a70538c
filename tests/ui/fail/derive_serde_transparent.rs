// #[serde(transparent)] reads the one field's value, not an object: refused at the attribute.

use serde::Deserialize;
use tool_runtime::ToolParam;

/// A note's identifier.
#[derive(Deserialize, ToolParam)]
#[serde(transparent)]
struct NoteId {
    /// The identifier.
    id: String,
}

fn main() {}
