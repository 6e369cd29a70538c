//! Snapshot files under `tests/snapshots/`: what the model sees, checked in
//! so any change to it is a reviewed diff. `UPDATE_SNAPSHOTS=1` rewrites
//! them after an intended change; read `git diff` before committing.

// Each test binary uses some of these helpers, not all.
#![allow(dead_code)]

use std::path::PathBuf;

use serde::Serialize;

/// Compares `actual` with `tests/snapshots/<file>`, or rewrites the file
/// when `UPDATE_SNAPSHOTS` is set.
pub fn check_text(file: &str, actual: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/snapshots")
        .join(file);
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("missing snapshot {} ({e}); run with UPDATE_SNAPSHOTS=1", path.display()));
    assert_eq!(
        actual, expected,
        "`{file}` changed; if that is intended, rerun with UPDATE_SNAPSHOTS=1 and review the diff"
    );
}

/// [`check_text`] for JSON, pretty-printed into `<name>.json` as it
/// serializes (a definition or schema keeps its parameters' order).
pub fn check_json(name: &str, actual: &impl Serialize) {
    check_text(
        &format!("{name}.json"),
        &(serde_json::to_string_pretty(actual).unwrap() + "\n"),
    );
}
