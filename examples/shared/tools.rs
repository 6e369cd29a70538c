//! The example tools shared by `quickstart`, `definitions`, `agent`, `repl`
//! and `mcp_server`: a file search, a file reader and an issue tracker over
//! an in-memory workspace.

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
    #[param(description = "Glob pattern such as `**/*.rs`", max_length = 256)] pattern: String,
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

/// Whether `path` matches `pattern`: `*` matches any run of characters
/// within a path segment, `**` any run at all, `/`s included, and takes a
/// `/` right after it along (`**/*.rs` matches `main.rs` too); any other
/// byte matches itself.
///
/// It walks the pattern once, keeping the set of path prefixes matched so
/// far, so its time is the pattern's length times the path's, whatever
/// stars a model sends.
fn glob_match(pattern: &str, path: &str) -> bool {
    let (mut pattern, path) = (pattern.as_bytes(), path.as_bytes());
    // `matched[i]`: the pattern read so far matches `path[..i]`.
    let mut matched = vec![false; path.len() + 1];
    matched[0] = true;
    loop {
        match pattern {
            [] => return matched[path.len()],
            [b'*', b'*', rest @ ..] => {
                pattern = rest.strip_prefix(b"/").unwrap_or(rest);
                // Any longer prefix too.
                let mut any = false;
                for m in &mut matched {
                    any |= *m;
                    *m = any;
                }
            }
            [b'*', rest @ ..] => {
                pattern = rest;
                // A longer prefix too, while no `/` comes in between.
                for i in 1..matched.len() {
                    matched[i] |= matched[i - 1] && path[i - 1] != b'/';
                }
            }
            [byte, rest @ ..] => {
                pattern = rest;
                // One byte more, when it is this one.
                for i in (1..matched.len()).rev() {
                    matched[i] = matched[i - 1] && path[i - 1] == *byte;
                }
                matched[0] = false;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::glob_match;

    /// The matcher this one replaced: plain recursion, exponential on
    /// patterns with many stars; kept here as the meaning to keep.
    fn recursive_match(pattern: &str, path: &str) -> bool {
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

    /// Every string of up to `max` bytes drawn from `alphabet`.
    fn all_strings(alphabet: &[u8], max: usize) -> Vec<String> {
        let mut all = vec![String::new()];
        let mut last = vec![String::new()];
        for _ in 0..max {
            last = last
                .iter()
                .flat_map(|s| alphabet.iter().map(move |&b| format!("{s}{}", b as char)))
                .collect();
            all.extend(last.iter().cloned());
        }
        all
    }

    #[test]
    fn globs() {
        assert!(glob_match("**/*.rs", "app/src/main.rs"));
        assert!(glob_match("**/*.rs", "main.rs"));
        assert!(glob_match("*.toml", "Cargo.toml"));
        assert!(!glob_match("*.rs", "app/src/main.rs"));
        assert!(glob_match("app/*/main.rs", "app/src/main.rs"));
        assert!(!glob_match("app/*", "app/src/main.rs"));
        assert!(glob_match("app/**", "app/src/main.rs"));
        assert!(glob_match("", ""));
        assert!(!glob_match("", "a"));
    }

    /// Every pattern of up to six bytes of `a`, `b`, `/` and `*` against
    /// every path of up to five bytes of `a`, `b` and `/` matches as it
    /// did with the recursive matcher.
    #[test]
    fn globs_match_as_they_did() {
        let paths = all_strings(b"ab/", 5);
        for pattern in all_strings(b"ab/*", 6) {
            for path in &paths {
                assert_eq!(
                    glob_match(&pattern, path),
                    recursive_match(&pattern, path),
                    "{pattern:?} against {path:?}"
                );
            }
        }
    }

    /// Patterns that took the recursive matcher exponential time end at
    /// once.
    #[test]
    fn many_stars_end_at_once() {
        let path = "a/".repeat(100) + "main.rs";
        let started = Instant::now();
        for pattern in [
            "**".repeat(40) + "z",
            "*a".repeat(120) + "z",
            "**/".repeat(80) + "*z",
            "*".repeat(255) + "z",
        ] {
            assert!(!glob_match(&pattern, &path), "{pattern}");
        }
        assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
    }
}
