//! Runs every case of `../shared/conformance/args.jsonl` (read from there at
//! test time, never copied) against the probe tool.

mod common {
    pub mod probe;
}

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde_json::Value;
use tool_runtime::{CallArguments, ToolRegistry};

use common::probe::Probe;

fn cases_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/conformance/args.jsonl")
}

fn code_set(value: &Value) -> BTreeSet<String> {
    value
        .as_array()
        .map(|items| items.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect())
        .unwrap_or_default()
}

#[tokio::test]
async fn every_conformance_case_binds_as_specified() {
    let path = cases_path();
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read the conformance cases at {}: {e}", path.display()));
    let mut lenient = ToolRegistry::new();
    lenient.register(Probe).unwrap();
    let mut strict = ToolRegistry::new().strict();
    strict.register(Probe).unwrap();

    let mut failures = Vec::new();
    let mut count = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let case: Value = serde_json::from_str(line).expect("each line is a JSON case");
        let id = case["id"].as_str().unwrap_or("?").to_owned();
        let arguments = match (case.get("raw"), case.get("args")) {
            (Some(raw), _) => CallArguments::Text(raw.as_str().expect("raw is text").to_owned()),
            (None, Some(args)) => CallArguments::Json(args.clone()),
            (None, None) => panic!("case {id} has neither args nor raw"),
        };
        let registry = if case["strict"] == Value::Bool(true) {
            &strict
        } else {
            &lenient
        };
        let result = registry.call("probe", arguments).await;
        let expect = &case["expect"];
        let got_errors: BTreeSet<String> = result.error_codes().into_iter().collect();
        let got_warnings: BTreeSet<String> = result.warning_codes().into_iter().collect();

        let problem = if let Some(errors) = expect.get("errors") {
            let want = code_set(errors);
            (!result.is_error || got_errors != want).then(|| {
                format!(
                    "expected errors {want:?}, got is_error={} errors {got_errors:?}: {}",
                    result.is_error,
                    result.text()
                )
            })
        } else {
            let want_bound = &expect["bound"];
            let want_warnings = code_set(&expect["warnings"]);
            let bound = result.structured_content.clone().unwrap_or(Value::Null);
            (result.is_error || &bound != want_bound || got_warnings != want_warnings).then(|| {
                format!(
                    "expected bound {want_bound} with warnings {want_warnings:?}, got is_error={} bound {bound} warnings {got_warnings:?} errors {got_errors:?}: {}",
                    result.is_error,
                    result.text()
                )
            })
        };
        if let Some(problem) = problem {
            failures.push(format!("case `{id}`: {problem}"));
        }
        count += 1;
    }
    assert!(count > 0, "no conformance cases were found in {}", path.display());
    assert!(
        failures.is_empty(),
        "{} of {count} conformance cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
