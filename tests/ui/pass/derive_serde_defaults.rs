//! A derived struct's serde defaults appear in its schema as `"default"`,
//! as a tool parameter's do: the field's `#[serde(default)]`, its
//! `#[serde(default = "path")]`, and the struct's own `#[serde(default)]`.
//! A default that is `null` or does not serialize is left out.

use serde::Deserialize;
use serde_json::json;
use tool_runtime::{ToolParam, ToolRegistry, tool};

fn ten() -> u32 {
    10
}

/// Not serializable: its default applies, unseen.
#[derive(Debug, Default, Deserialize, ToolParam)]
struct Opaque(u32);

/// Search options.
#[derive(Debug, Deserialize, ToolParam)]
struct Options {
    /// How many results.
    #[serde(default = "ten")]
    limit: u32,
    /// Match letter case.
    #[serde(default)]
    exact: bool,
    /// Where to look; everywhere when absent.
    #[serde(default)]
    root: Option<String>,
    /// An opaque value.
    #[serde(default)]
    opaque: Opaque,
    /// Required.
    query: String,
}

/// Layout settings.
#[derive(Debug, Deserialize, ToolParam)]
#[serde(default)]
struct Layout {
    /// Columns.
    columns: u8,
    /// Title.
    title: String,
}

impl Default for Layout {
    fn default() -> Self {
        Layout {
            columns: 2,
            title: "Notes".into(),
        }
    }
}

/// A page of items.
#[derive(Debug, Deserialize, ToolParam)]
struct Page<T> {
    /// The items.
    #[serde(default)]
    items: Vec<T>,
    /// The page number.
    #[serde(default)]
    number: u32,
}

/// Search the notes.
#[tool]
async fn search(
    #[param(description = "Search options")] options: Options,
    #[param(description = "Layout")] layout: Layout,
    #[param(description = "A page")] page: Page<String>,
) -> String {
    format!("{options:?} {layout:?} {page:?}")
}

fn main() {
    let mut registry = ToolRegistry::new();
    registry.register(Search).unwrap();
    let tool = registry.get("search").unwrap();
    let schema = tool.definition().input_schema();
    let options = &schema["properties"]["options"]["properties"];
    assert_eq!(options["limit"]["default"], json!(10), "{schema}");
    assert_eq!(options["exact"]["default"], json!(false), "{schema}");
    assert!(options["root"].get("default").is_none(), "{schema}");
    assert!(options["opaque"].get("default").is_none(), "{schema}");
    assert!(options["query"].get("default").is_none(), "{schema}");
    let layout = &schema["properties"]["layout"]["properties"];
    assert_eq!(layout["columns"]["default"], json!(2), "{schema}");
    assert_eq!(layout["title"]["default"], json!("Notes"), "{schema}");
    let page = &schema["properties"]["page"]["properties"];
    assert!(page["items"].get("default").is_none(), "{schema}");
    assert_eq!(page["number"]["default"], json!(0), "{schema}");
}
