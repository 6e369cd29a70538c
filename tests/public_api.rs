//! The public API stays what users need (issue: "a public API for 1.0"):
//!
//! - every item the crate root re-exports is used in the README or an
//!   example, so nothing is public that no user was shown a reason for;
//! - every public struct with public fields is `#[non_exhaustive]`, so a
//!   field can be added without breaking anyone (construct them through
//!   their constructors and builders).
//!
//! Both read the source, so they run without building docs.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The names in the crate root's `pub use` lines.
fn root_reexports() -> Vec<String> {
    let lib = read(&root().join("tool-runtime/src/lib.rs"));
    let mut names = Vec::new();
    for line in lib.lines().filter(|l| l.starts_with("pub use ")) {
        let items = line.trim_start_matches("pub use ").trim_end_matches(';');
        let items = match items.split_once('{') {
            Some((_, list)) => list.trim_end_matches('}').to_owned(),
            None => items.rsplit("::").next().unwrap().to_owned(),
        };
        names.extend(items.split(',').map(|n| n.trim().to_owned()).filter(|n| !n.is_empty()));
    }
    names
}

#[test]
fn every_root_item_is_shown_to_users() {
    let mut shown = read(&root().join("README.md")) + &read(&root().join("tool-runtime/README.md"));
    let mut examples = Vec::new();
    rust_files(&root().join("examples"), &mut examples);
    for example in examples {
        shown += &read(&example);
    }
    let names = root_reexports();
    assert!(names.len() > 20, "the root re-exports were not found: {names:?}");
    let unshown: Vec<&String> = names.iter().filter(|name| !word_in(&shown, name)).collect();
    assert!(
        unshown.is_empty(),
        "public items no README section or example uses (show them, or make them private): {unshown:?}"
    );
}

/// Whether `name` stands in `text` as a whole word.
fn word_in(text: &str, name: &str) -> bool {
    text.match_indices(name).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + name.len()..].chars().next();
        let boundary = |c: Option<char>| c.is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
        boundary(before) && boundary(after)
    })
}

#[test]
fn public_structs_with_public_fields_are_non_exhaustive() {
    let mut files = Vec::new();
    rust_files(&root().join("tool-runtime/src"), &mut files);
    let mut offenders = Vec::new();
    for file in files
        .iter()
        .filter(|f| !f.ends_with("private.rs") && !f.ends_with("tests.rs"))
    {
        let text = read(file);
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let Some(rest) = line.strip_prefix("pub struct ") else {
                continue;
            };
            if !rest.trim_end().ends_with('{') {
                continue; // unit and tuple structs
            }
            let body = lines[i + 1..].iter().take_while(|l| !l.starts_with('}'));
            let public_field = body
                .map(|l| l.trim_start())
                .any(|l| l.starts_with("pub ") && l.contains(':'));
            let attributes = lines[..i]
                .iter()
                .rev()
                .take_while(|l| l.starts_with("#[") || l.starts_with("///"));
            let non_exhaustive = attributes.clone().any(|l| l.starts_with("#[non_exhaustive]"));
            if public_field && !non_exhaustive {
                offenders.push(format!("{}: {}", file.display(), line.trim()));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "public structs with public fields but no #[non_exhaustive]: {offenders:#?}"
    );
}
