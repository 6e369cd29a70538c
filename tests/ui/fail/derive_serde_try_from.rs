// #[serde(try_from = "...")] reads another type than the one the schema describes: refused at the attribute.

use serde::Deserialize;
use tool_runtime::ToolParam;

/// A range of lines.
#[derive(Deserialize, ToolParam)]
#[serde(try_from = "String")]
struct Window {
    /// The first line.
    start: u32,
}

impl TryFrom<String> for Window {
    type Error = std::num::ParseIntError;

    fn try_from(text: String) -> Result<Self, Self::Error> {
        Ok(Window { start: text.parse()? })
    }
}

fn main() {}
