//! The probe tool of `shared/conformance/README.md`: it echoes every bound
//! argument back, so a test sees exactly what the binder made of a call.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::json;
use tool_runtime::{ToolParam, tool};

/// How the probe would open a file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToolParam)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Only read.
    #[default]
    Read,
    /// Overwrite.
    Write,
    /// Add at the end.
    Append,
}

/// A range of lines.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToolParam)]
pub struct Window {
    /// The first line.
    pub start: u32,
    /// The last line; the end of the file when absent.
    pub end: Option<u32>,
}

/// Echo every bound argument back as one JSON object.
#[tool]
#[allow(clippy::too_many_arguments)]
pub async fn probe(
    #[param(description = "Glob pattern such as `**/*.rs`")] pattern: String,
    #[param(description = "Match letter case exactly", default = true)] case_sensitive: bool,
    #[param(description = "Largest number of results", default = 100, min = 1, max = 10000)] max_results: u32,
    #[param(description = "Results to skip; negative counts from the end", default = 0)] offset: i64,
    #[param(description = "Smallest score to keep")] threshold: Option<f64>,
    #[param(description = "Files to search", default)] files: Vec<String>,
    #[param(description = "How to open the files", default = Mode::Read)] mode: Mode,
    #[param(description = "Lines to look at")] window: Option<Window>,
    #[param(description = "Labels to attach")] labels: Option<BTreeMap<String, String>>,
) -> serde_json::Value {
    json!({
        "pattern": pattern,
        "case_sensitive": case_sensitive,
        "max_results": max_results,
        "offset": offset,
        "threshold": threshold,
        "files": files,
        "mode": mode,
        "window": window,
        "labels": labels,
    })
}
