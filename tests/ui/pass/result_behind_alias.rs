//! A `Result` behind a type alias is read by its type, not its spelling:
//! `Err(e)` is an error result with `e`'s message (never the JSON
//! `{"Err": ...}`), `Ok(v)` is `v` as JSON, and the value's output schema
//! is advertised as for `Result<Report, E>` written out.

use serde::Serialize;
use serde_json::json;
use tool_runtime::{ToolError, ToolParam, ToolRegistry, tool};

/// What a check found.
#[derive(Serialize, ToolParam, serde::Deserialize)]
struct Report {
    /// How many problems.
    problems: u32,
}

type Checked = Result<Report, String>;
type CheckedOrToolError = Result<Report, ToolError>;

/// Check something.
#[tool]
async fn check(#[param(description = "Fail instead")] fail: bool) -> Checked {
    if fail {
        Err("boom".to_owned())
    } else {
        Ok(Report { problems: 2 })
    }
}

/// Check something, failing with a `ToolError` (which is not `Serialize`).
#[tool]
fn check_plain(#[param(description = "Fail instead")] fail: bool) -> CheckedOrToolError {
    if fail {
        Err(ToolError::new("bang"))
    } else {
        Ok(Report { problems: 3 })
    }
}

fn main() {
    let mut registry = ToolRegistry::new();
    registry.register(Check).unwrap();
    registry.register(CheckPlain).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();

    let failed = runtime.block_on(registry.call("check", json!({"fail": true})));
    assert!(failed.is_error, "{failed:?}");
    assert_eq!(failed.text(), "boom");
    assert_eq!(failed.structured_content, None);

    let passed = runtime.block_on(registry.call("check", json!({"fail": false})));
    assert!(!passed.is_error, "{passed:?}");
    assert_eq!(passed.structured_content, Some(json!({"problems": 2})));

    let failed = runtime.block_on(registry.call("check_plain", json!({"fail": true})));
    assert!(failed.is_error, "{failed:?}");
    assert_eq!(failed.text(), "bang");
    let passed = runtime.block_on(registry.call("check_plain", json!({"fail": false})));
    assert_eq!(passed.structured_content, Some(json!({"problems": 3})));

    let tool = registry.get("check").unwrap();
    assert!(
        tool.definition().output_schema().is_some(),
        "the alias hides the output schema"
    );
}
