// #[serde(with = "...")] reads the field with another function than the one the schema describes: refused at the attribute.

use serde::Deserialize;
use tool_runtime::ToolParam;

mod as_text {
    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
        let text = <String as serde::Deserialize>::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// A range of lines.
#[derive(Deserialize, ToolParam)]
struct Window {
    /// The first line.
    #[serde(with = "as_text")]
    start: u32,
}

fn main() {}
