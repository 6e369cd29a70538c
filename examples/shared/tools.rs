//! The example tools shared by `quickstart` and `definitions`: a file
//! search, a file reader and an issue tracker over an in-memory workspace.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use tool_runtime::{State, ToolError, ToolParam, ToolRegistry, tool};

/// A registry holding the three example tools and their workspace.
pub fn registry() -> ToolRegistry {
    let mut registry = ToolRegistry::new().with_state(Workspace::sample());
    registry
        .register(SearchFiles)
        .and_then(|r| r.register(ReadFile))
        .and_then(|r| r.register(FileIssue))
        .expect("the example tools have distinct names and their state");
    registry
}

/// An in-memory workspace the tools work on, held by the registry as
/// shared state.
pub struct Workspace {
    files: BTreeMap<String, String>,
}

impl Workspace {
    pub fn sample() -> Self {
        let files = [
            ("Cargo.toml", "[workspace]\nmembers = [\"app\"]\n"),
            ("app/src/main.rs", "fn main() {\n    println!(\"hello\");\n}\n"),
            ("app/src/lib.rs", "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n"),
            ("README.md", "# Demo\n"),
        ];
        Workspace {
            files: files.iter().map(|(p, c)| (p.to_string(), c.to_string())).collect(),
        }
    }
}

/// Search the workspace for files whose path matches a glob pattern.
///
/// Use it when the user asks to find files by name or extension. Returns the
/// matching paths. Not for searching file contents.
#[tool(read_only = true, tags = ["files"])]
pub async fn search_files(
    #[param(description = "Glob pattern such as `**/*.rs`")] pattern: String,
    #[param(description = "Match letter case exactly", default = true)] case_sensitive: bool,
    #[param(
        description = "Largest number of paths to return",
        default = 100,
        min = 1,
        max = 10_000
    )]
    max_results: u32,
    #[param(description = "Only search below this folder")] root: Option<String>,
    workspace: State<Workspace>,
) -> Vec<String> {
    let fold = |s: &str| {
        if case_sensitive { s.to_owned() } else { s.to_lowercase() }
    };
    let pattern = fold(&pattern);
    workspace
        .files
        .keys()
        .filter(|path| root.as_ref().is_none_or(|r| path.starts_with(r.as_str())))
        .filter(|path| glob_match(&pattern, &fold(path)))
        .take(max_results as usize)
        .cloned()
        .collect()
}

/// Read a text file from the workspace.
///
/// Use it after `search_files` has found the path. Fails when the file does
/// not exist.
///
/// # Arguments
///
/// * `path` - The file's path relative to the workspace root
/// * `max_lines` - Stop after this many lines
#[tool(read_only = true, tags = ["files"])]
pub async fn read_file(
    path: String,
    #[param(default = 200, min = 1)] max_lines: usize,
    workspace: State<Workspace>,
) -> Result<String, ToolError> {
    let text = workspace
        .files
        .get(&path)
        .ok_or_else(|| ToolError::new(format!("no file at `{path}`; use search_files to find one")))?;
    Ok(text.lines().take(max_lines).collect::<Vec<_>>().join("\n"))
}

/// How urgent an issue is.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, ToolParam)]
#[serde(rename_all = "lowercase")]
pub enum Priority {
    /// Whenever there is time.
    Low,
    /// This week.
    Normal,
    /// Today.
    Urgent,
}

/// A new issue for the tracker.
#[derive(Debug, Serialize, Deserialize, ToolParam)]
pub struct NewIssue {
    /// A one-line summary.
    #[param(min_length = 5, max_length = 80)]
    title: String,
    /// What happened and what was expected.
    body: String,
    /// How urgent it is.
    priority: Priority,
    /// Labels such as `bug` or `docs`.
    #[serde(default)]
    labels: Vec<String>,
}

/// The tracker's answer.
#[derive(Debug, Serialize, ToolParam, Deserialize)]
pub struct Filed {
    /// The new issue's number.
    number: u32,
    /// Where to see it.
    url: String,
}

/// File an issue in the project's tracker.
///
/// Use it when the user reports a bug or asks for a change to be recorded.
#[tool(title = "File an issue", destructive = false, idempotent = false, open_world = true, tags = ["tracker"])]
pub async fn file_issue(#[param(description = "The issue to file")] issue: NewIssue) -> Filed {
    let number = 100 + issue.title.len() as u32;
    Filed {
        number,
        url: format!("https://tracker.example/issues/{number}"),
    }
}

/// `*` matches within a path segment, `**` across segments.
fn glob_match(pattern: &str, path: &str) -> bool {
    fn go(p: &[u8], s: &[u8]) -> bool {
        match p {
            [] => s.is_empty(),
            [b'*', b'*', rest @ ..] => {
                let rest = rest.strip_prefix(b"/").unwrap_or(rest);
                (0..=s.len()).any(|i| go(rest, &s[i..]))
            }
            [b'*', rest @ ..] => (0..=s.len())
                .take_while(|&i| i == 0 || s[i - 1] != b'/')
                .any(|i| go(rest, &s[i..])),
            [c, rest @ ..] => s.first() == Some(c) && go(rest, &s[1..]),
        }
    }
    go(pattern.as_bytes(), path.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::glob_match;

    #[test]
    fn globs() {
        assert!(glob_match("**/*.rs", "app/src/main.rs"));
        assert!(glob_match("*.toml", "Cargo.toml"));
        assert!(!glob_match("*.rs", "app/src/main.rs"));
    }
}
