//! A return type whose text merely contains `impl` (`Page<Simpl>`) keeps its
//! output schema; only a real `impl Trait` has none.

use serde::{Deserialize, Serialize};
use tool_runtime::{ToolParam, ToolRegistry, tool};

/// A simple item.
#[derive(Serialize, Deserialize, ToolParam)]
struct Simpl {
    /// Its name.
    name: String,
}

/// A page of results.
#[derive(Serialize, Deserialize, ToolParam)]
struct Page<T> {
    /// The results.
    items: Vec<T>,
}

/// List the items.
#[tool]
async fn list() -> Page<Simpl> {
    Page { items: vec![Simpl { name: "a".into() }] }
}

/// List the names.
#[tool]
async fn names() -> Vec<impl Serialize> {
    vec!["a"]
}

fn main() {
    let mut registry = ToolRegistry::new();
    registry.register(List).unwrap();
    registry.register(Names).unwrap();
    let list_tool = registry.get("list").unwrap();
    let list = list_tool.definition();
    assert!(list.output_schema().is_some(), "Page<Simpl> lost its output schema");
    let names_tool = registry.get("names").unwrap();
    let names = names_tool.definition();
    assert!(names.output_schema().is_none());
}
