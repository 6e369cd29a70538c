// A derived type's doc written by a macro reaches #[derive(ToolParam)] unexpanded: an error at each such doc (on the type, a field, a variant), never a silently shorter description, nor a field said to have none.

use serde::Deserialize;
use tool_runtime::ToolParam;

/// A range of lines.
#[doc = concat!("Counted ", "from one.")]
#[derive(Deserialize, ToolParam)]
struct Window {
    /// The first line.
    start: u32,
    #[doc = concat!("The last ", "line.")]
    end: u32,
    #[doc = concat!("Ignored: ", "the description is given.")]
    #[param(description = "How many lines around")]
    around: u32,
}

/// How urgent a task is.
#[derive(Deserialize, ToolParam)]
enum Urgency {
    /// Only when idle.
    Low,
    #[doc = concat!("Before anything ", "else.")]
    High,
}

fn main() {}
