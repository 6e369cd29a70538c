// Keys of #[param] that have no place on a newtype's field are errors, never silently ignored.

use serde::Deserialize;
use tool_runtime::ToolParam;

/// A share of a whole, in percent.
#[derive(Deserialize, ToolParam)]
struct Percent(#[param(description = "In percent", default = 5, rename = "pct")] u8);

fn main() {}
