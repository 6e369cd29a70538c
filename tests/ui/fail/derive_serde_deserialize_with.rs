// #[serde(deserialize_with = "...")] reads the field with another function than the one the schema describes: refused at the attribute.

use serde::Deserialize;
use tool_runtime::ToolParam;

fn from_text<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    let text = String::deserialize(d)?;
    text.parse().map_err(serde::de::Error::custom)
}

/// A range of lines.
#[derive(Deserialize, ToolParam)]
struct Window {
    /// The first line.
    #[serde(deserialize_with = "from_text")]
    start: u32,
}

fn main() {}
