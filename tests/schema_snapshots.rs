//! The exact schemas the model sees, checked in under `tests/snapshots/` so
//! any change to them is a reviewed diff. Set `UPDATE_SNAPSHOTS=1` to rewrite
//! them after an intended change, then read `git diff`.

mod common {
    pub mod probe;
    pub mod snapshot;
}

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use serde::{Deserialize, Serialize};
use tool_runtime::{Tool, ToolParam, tool};

/// A colour channel.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, ToolParam)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Channel {
    /// Red light.
    DeepRed,
    /// Green light.
    #[serde(rename = "verde")]
    Green,
    /// Blue light.
    Blue,
}

/// A rectangle on the canvas.
#[derive(Debug, Serialize, Deserialize, ToolParam)]
#[serde(rename_all = "camelCase")]
pub struct Rect {
    /// Distance from the left edge, in pixels.
    #[param(min = 0, max = 4096)]
    pub left_edge: i32,
    /// Width in pixels.
    pub width: u16,
    /// The rectangle's name.
    #[param(pattern = "^[a-z]+$", max_length = 16)]
    pub name: Option<String>,
    /// Corner radius; square corners when absent.
    #[serde(default)]
    pub radius: f32,
    #[serde(skip)]
    pub cache: Option<u64>,
}

/// Accept one parameter of every supported type.
#[tool]
#[allow(clippy::too_many_arguments, unused_variables)]
pub fn every_type(
    #[param(description = "Text", min_length = 1)] text: String,
    #[param(description = "A flag")] flag: bool,
    #[param(description = "i8")] a: i8,
    #[param(description = "i16")] b: i16,
    #[param(description = "i32")] c: i32,
    #[param(description = "i64", min = -5, max = 5)] d: i64,
    #[param(description = "u8")] e: u8,
    #[param(description = "u16")] f: u16,
    #[param(description = "u32")] g: u32,
    #[param(description = "u64", max = 1_000_000)] h: u64,
    #[param(description = "usize")] i: usize,
    #[param(description = "f32")] j: f32,
    #[param(description = "f64", min = 0.0, max = 1.0)] k: f64,
    #[param(description = "An optional count")] maybe: Option<u32>,
    #[param(description = "A list", min_items = 1, max_items = 3)] list: Vec<String>,
    #[param(description = "Distinct tags")] tags: HashSet<String>,
    #[param(description = "Sorted ids", min = 1)] ids: BTreeSet<u32>,
    #[param(description = "Weights by name")] weights: HashMap<String, f64>,
    #[param(description = "Rects by name")] rects: BTreeMap<String, Rect>,
    #[param(description = "Anything at all")] anything: serde_json::Value,
    #[param(description = "A channel", default = Channel::Blue)] channel: Channel,
    #[param(description = "A rectangle")] rect: Rect,
    #[param(description = "Optional rectangles")] more: Option<Vec<Rect>>,
    #[param(description = "Renamed on the wire", rename = "wireName", default)] renamed: u8,
) -> String {
    String::new()
}

#[test]
fn every_type_schema() {
    common::snapshot::check_json("every_type", EveryType.definition().input_schema());
}

#[test]
fn probe_schema() {
    common::snapshot::check_json("probe", common::probe::Probe.definition().input_schema());
}

/// A window of lines.
///
/// Counted from one.
///
/// # Examples
///
/// ```text
/// # a hash line in code
/// Window { start: 1, mode: Mode::Exact }
/// ```
#[derive(Debug, Serialize, Deserialize, ToolParam)]
pub struct Window {
    /// The first line.
    ///
    /// # Panics
    ///
    /// Never.
    pub start: u32,
    /// How to match.
    pub mode: Mode,
}

/// How to match names.
///
/// ## Examples
///
/// `Mode::Exact`
#[derive(Debug, Serialize, Deserialize, ToolParam)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// As written.
    ///
    /// # Note
    ///
    /// Case matters.
    Exact,
    /// Close names too.
    Fuzzy,
}

/// Read some windows of a file.
#[tool]
pub fn read_windows(#[param(description = "The windows")] windows: Vec<Window>) -> String {
    format!("{windows:?}")
}

/// Derived types are described as a tool is: by the doc text before the
/// first heading, never by the sections for people reading the code.
#[test]
fn derived_descriptions_stop_at_the_first_heading() {
    let schema = ReadWindows.definition().input_schema();
    let window = &schema["properties"]["windows"]["items"];
    assert_eq!(
        window["description"], "A window of lines.\n\nCounted from one.",
        "{schema}"
    );
    assert_eq!(
        window["properties"]["start"]["description"], "The first line.",
        "{schema}"
    );
    assert_eq!(
        window["properties"]["mode"]["description"], "How to match. exact: As written; fuzzy: Close names too",
        "{schema}"
    );
    common::snapshot::check_json("read_windows", schema);
}
