//! `#[tool(crate = ...)]` and `#[param(crate = ...)]` with the runtime crate
//! renamed: the generated code must reach the runtime only through the given
//! path.

use renamed::{ToolParam, tool};
use serde::Deserialize;

/// A point on a plane.
#[derive(Debug, Deserialize, ToolParam)]
#[param(crate = renamed)]
pub struct Point {
    /// Horizontal position.
    pub x: i32,
    /// Vertical position.
    pub y: i32,
}

/// Measure a point's distance from the origin, in whole units.
#[tool(crate = renamed)]
pub async fn distance(#[param(description = "The point")] point: Point) -> i64 {
    let (x, y) = (i64::from(point.x), i64::from(point.y));
    ((x * x + y * y) as f64).sqrt() as i64
}

#[cfg(test)]
mod tests {
    use super::*;
    use renamed::ToolRegistry;

    #[tokio::test]
    async fn a_renamed_runtime_still_serves_the_tool() {
        let mut registry = ToolRegistry::new();
        registry.register(Distance).unwrap();
        let result = registry
            .call("distance", serde_json::json!({"point": {"x": 3, "y": "4"}}))
            .await;
        assert!(!result.is_error, "{}", result.text());
        assert_eq!(result.text(), "5");
    }
}
