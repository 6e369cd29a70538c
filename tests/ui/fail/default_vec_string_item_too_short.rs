// A string item of a list default, made with `.into()` or `String::from`, is held to `min_length`: the error points at the default.

use tool_runtime::tool;

/// Join the tags.
#[tool]
async fn join(
    #[param(description = "The tags", default = vec!["ok".into(), String::from("")], min_length = 1)] tags: Vec<String>,
) -> String {
    tags.join(",")
}

fn main() {}
