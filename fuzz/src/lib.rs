//! What the fuzz targets share: a probe tool with every kind of parameter,
//! and the invariants every parsed provider message must keep.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use serde::{Deserialize, Serialize};
use serde_json::json;
use tool_runtime::{ToolCall, ToolParam, ToolRegistry, tool};

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

/// The probe of `tests/common/probe.rs` (same names, types and defaults, so
/// its seeds and the conformance cases apply) plus what it lacks: a string
/// with a pattern and length bounds, two sets and a bounded list.
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
    #[param(
        description = "A short identifier",
        pattern = "^[a-z][a-z0-9_]*$",
        min_length = 2,
        max_length = 16
    )]
    ident: Option<String>,
    #[param(description = "Tags to match", max_items = 8)] tags: Option<BTreeSet<String>>,
    #[param(description = "Line numbers to skip", default)] skip: HashSet<u32>,
    #[param(description = "Weights per field", min_items = 1, max_items = 4)] weights: Option<Vec<f64>>,
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
        "ident": ident,
        "tags": tags,
        "skip": skip,
        "weights": weights,
    })
}

/// A registry of the probe in the given mode.
pub fn registry(strict: bool) -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    if strict {
        registry = registry.strict();
    }
    registry.register(Probe).expect("the probe registers");
    registry
}

/// A runtime to drive one call at a time, as a fuzz target runs.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a current-thread runtime")
}

/// The input as JSON, or `None` when it is not (the parsers take parsed
/// messages only, so such input has nothing to say).
pub fn json_input(data: &[u8]) -> Option<serde_json::Value> {
    serde_json::from_slice(data).ok()
}

/// What every call a provider parser returned must satisfy: a non-empty
/// name, and ids present (when `ids_required`) and distinct.
pub fn check_calls(calls: &[ToolCall], ids_required: bool) {
    let mut seen = HashSet::new();
    for call in calls {
        // Found by these targets once (seed `finding-empty-name.json`):
        // a call named "" is a malformed message, never a call.
        assert!(!call.name.is_empty(), "a call without a name: {call:?}");
        match &call.id {
            Some(id) => {
                assert!(!id.is_empty(), "an empty id: {call:?}");
                assert!(seen.insert(id.as_str()), "the id {id:?} twice");
            }
            None => assert!(!ids_required, "a call without the id its provider requires: {call:?}"),
        }
    }
}
