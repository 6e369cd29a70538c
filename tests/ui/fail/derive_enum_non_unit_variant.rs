// #[derive(ToolParam)] on an enum with a tuple variant: the error points at its fields.

use serde::Deserialize;
use tool_runtime::{ToolParam, tool};

/// How to sort.
#[derive(Deserialize, ToolParam)]
enum Order {
    /// As they are.
    Keep,
    /// By a field.
    By(String),
}

/// List the notes.
#[tool]
async fn list(#[param(description = "How to sort the notes")] order: Order) -> String {
    match order {
        Order::Keep => "keep".to_owned(),
        Order::By(field) => field,
    }
}

fn main() {
    let _ = List;
}
