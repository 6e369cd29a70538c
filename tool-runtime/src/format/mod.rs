//! Provider wire formats: tool definitions out, calls in, results out.
//!
//! One module a provider. Every definition is rendered from the tool's one
//! cached schema and kept, so listing definitions builds no schema per call.

use std::sync::OnceLock;

use serde_json::Value;

use crate::tool::ToolDefinition;

pub mod anthropic;

/// A provider's format for tool definitions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Format {
    /// Anthropic Messages: `{name, description, input_schema}`.
    Anthropic,
}

impl Format {
    /// Every format, in the order of the render cache.
    pub const ALL: &'static [Format] = &[Format::Anthropic];

    fn slot(self) -> usize {
        self as usize
    }
}

/// One rendered definition per format, made on first use.
#[derive(Debug, Default)]
pub(crate) struct RenderCache {
    slots: [OnceLock<Value>; 1],
}

impl ToolDefinition {
    /// This tool's definition in `format`, rendered once and kept.
    pub fn render(&self, format: Format) -> &Value {
        self.rendered.slots[format.slot()].get_or_init(|| match format {
            Format::Anthropic => anthropic::definition(self),
        })
    }
}
