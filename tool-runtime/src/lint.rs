//! Advice for the people writing tools: names and descriptions that make
//! models pick the wrong tool or fill it in badly.
//!
//! Findings are advice, not errors: the registry serves a tool whatever the
//! lint says. Run it in a test or at start-up and read what it finds.

use std::fmt;

use crate::tool::ToolDefinition;

/// What a finding is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LintRule {
    /// The tool name is not `snake_case`.
    NameNotSnakeCase,
    /// The tool name does not start with a verb (`search_files`, not `files`).
    NameNotVerb,
    /// The description is shorter than one sentence.
    DescriptionTooShort,
    /// The description runs longer than a few sentences.
    DescriptionTooLong,
    /// A parameter's description only repeats its name.
    DescriptionRepeatsName,
    /// Two tool names differ by a letter or two, or only in separators.
    NearDuplicateNames,
    /// One request offers more tools than a model chooses among well.
    TooManyTools,
}

impl LintRule {
    /// The rule's name, e.g. `name_not_snake_case`.
    pub fn as_str(self) -> &'static str {
        match self {
            LintRule::NameNotSnakeCase => "name_not_snake_case",
            LintRule::NameNotVerb => "name_not_verb",
            LintRule::DescriptionTooShort => "description_too_short",
            LintRule::DescriptionTooLong => "description_too_long",
            LintRule::DescriptionRepeatsName => "description_repeats_name",
            LintRule::NearDuplicateNames => "near_duplicate_names",
            LintRule::TooManyTools => "too_many_tools",
        }
    }
}

/// One piece of advice.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct LintFinding {
    /// The rule.
    pub rule: LintRule,
    /// The tool it is about (`None` for the request as a whole).
    pub tool: Option<String>,
    /// The parameter it is about, if any.
    pub param: Option<String>,
    /// What to change.
    pub message: String,
}

impl fmt::Display for LintFinding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.rule.as_str())?;
        match (&self.tool, &self.param) {
            (Some(tool), Some(param)) => write!(f, " ({tool}.{param})")?,
            (Some(tool), None) => write!(f, " ({tool})")?,
            _ => {}
        }
        write!(f, ": {}", self.message)
    }
}

/// More tools than this in one request is a finding.
pub const MAX_TOOLS_PER_REQUEST: usize = 10;

/// Fewer words than this is not a sentence.
const MIN_DESCRIPTION_WORDS: usize = 5;

/// More sentences than this is more than "a few".
const MAX_DESCRIPTION_SENTENCES: usize = 6;

/// Verbs tool names commonly start with.
const VERBS: &[&str] = &[
    "add",
    "analyze",
    "append",
    "apply",
    "approve",
    "archive",
    "ask",
    "assign",
    "block",
    "book",
    "browse",
    "build",
    "bump",
    "calculate",
    "call",
    "cancel",
    "check",
    "classify",
    "clear",
    "clone",
    "close",
    "collect",
    "combine",
    "commit",
    "compare",
    "complete",
    "compress",
    "compute",
    "configure",
    "confirm",
    "connect",
    "convert",
    "copy",
    "count",
    "crawl",
    "create",
    "crop",
    "decode",
    "decrement",
    "decrypt",
    "delete",
    "deploy",
    "describe",
    "detect",
    "diff",
    "disable",
    "disconnect",
    "dispatch",
    "divide",
    "download",
    "draft",
    "drop",
    "echo",
    "edit",
    "embed",
    "enable",
    "encode",
    "encrypt",
    "estimate",
    "evaluate",
    "execute",
    "expand",
    "explain",
    "export",
    "extract",
    "fetch",
    "file",
    "fill",
    "filter",
    "find",
    "fix",
    "flag",
    "follow",
    "format",
    "forward",
    "generate",
    "get",
    "grant",
    "greet",
    "grep",
    "guess",
    "hash",
    "identify",
    "import",
    "increment",
    "index",
    "init",
    "initialize",
    "insert",
    "inspect",
    "install",
    "invite",
    "join",
    "kill",
    "label",
    "launch",
    "link",
    "lint",
    "list",
    "load",
    "locate",
    "lock",
    "log",
    "login",
    "logout",
    "look",
    "lookup",
    "map",
    "mark",
    "match",
    "measure",
    "merge",
    "migrate",
    "monitor",
    "move",
    "multiply",
    "mute",
    "navigate",
    "normalize",
    "notify",
    "open",
    "optimize",
    "order",
    "parse",
    "patch",
    "pause",
    "pick",
    "pin",
    "ping",
    "plan",
    "play",
    "post",
    "predict",
    "prepare",
    "preview",
    "print",
    "process",
    "publish",
    "purchase",
    "push",
    "put",
    "query",
    "rank",
    "rate",
    "read",
    "recommend",
    "record",
    "redact",
    "redo",
    "refresh",
    "refund",
    "register",
    "reject",
    "release",
    "reload",
    "remind",
    "remove",
    "rename",
    "render",
    "repair",
    "replace",
    "reply",
    "report",
    "request",
    "reserve",
    "reset",
    "resize",
    "resolve",
    "restart",
    "restore",
    "resume",
    "retrieve",
    "retry",
    "review",
    "revoke",
    "rotate",
    "round",
    "route",
    "run",
    "sample",
    "save",
    "scan",
    "schedule",
    "score",
    "scrape",
    "scroll",
    "search",
    "select",
    "send",
    "set",
    "share",
    "shorten",
    "show",
    "sign",
    "simulate",
    "snapshot",
    "sort",
    "spawn",
    "split",
    "start",
    "stop",
    "store",
    "stream",
    "submit",
    "subscribe",
    "subtract",
    "suggest",
    "sum",
    "summarize",
    "swap",
    "sync",
    "tag",
    "tail",
    "take",
    "terminate",
    "test",
    "toggle",
    "tokenize",
    "trace",
    "track",
    "train",
    "transfer",
    "transform",
    "translate",
    "trigger",
    "trim",
    "truncate",
    "undo",
    "unlock",
    "unpin",
    "unsubscribe",
    "unzip",
    "update",
    "upload",
    "upsert",
    "validate",
    "verify",
    "view",
    "wait",
    "watch",
    "write",
    "zip",
];

/// Lints `tools`, as one request would offer them.
pub(crate) fn lint(tools: &[&ToolDefinition]) -> Vec<LintFinding> {
    let mut findings = Vec::new();
    for tool in tools {
        lint_tool(tool, &mut findings);
    }
    // Each name squashed once: two servers of a thousand tools make two
    // million pairs.
    let names: Vec<ComparedName> = tools.iter().map(|t| ComparedName::new(t.name())).collect();
    for (i, a) in tools.iter().enumerate() {
        for (j, b) in tools.iter().enumerate().skip(i + 1) {
            if names[i].nearly_equals(&names[j]) {
                findings.push(LintFinding {
                    rule: LintRule::NearDuplicateNames,
                    tool: Some(a.name().to_owned()),
                    param: None,
                    message: format!(
                        "`{}` and `{}` are easy to confuse; name them for what sets them apart",
                        a.name(),
                        b.name()
                    ),
                });
            }
        }
    }
    if tools.len() > MAX_TOOLS_PER_REQUEST {
        findings.push(LintFinding {
            rule: LintRule::TooManyTools,
            tool: None,
            param: None,
            message: format!(
                "{} tools in one request; models choose better among at most {MAX_TOOLS_PER_REQUEST}: send a subset with Selection",
                tools.len()
            ),
        });
    }
    findings
}

fn lint_tool(tool: &ToolDefinition, findings: &mut Vec<LintFinding>) {
    let name = tool.name();
    let mut find = |rule, param: Option<&str>, message: String| {
        findings.push(LintFinding {
            rule,
            tool: Some(name.to_owned()),
            param: param.map(str::to_owned),
            message,
        });
    };
    if !is_snake_case(name) {
        find(
            LintRule::NameNotSnakeCase,
            None,
            format!("name the tool in snake_case, e.g. `{}`", to_snake_case(name)),
        );
    }
    let first_word = name.split(['_', '-']).next().unwrap_or(name).to_lowercase();
    if !VERBS.contains(&first_word.as_str()) {
        find(
            LintRule::NameNotVerb,
            None,
            format!("start the name with the action it performs (`search_`, `create_`, ...), not `{first_word}`"),
        );
    }
    let description = tool.description();
    let words = description.split_whitespace().count();
    if words < MIN_DESCRIPTION_WORDS {
        find(
            LintRule::DescriptionTooShort,
            None,
            format!("the description has {words} words; say what the tool does, when to use it and what it returns"),
        );
    }
    let sentences = count_sentences(description);
    if sentences > MAX_DESCRIPTION_SENTENCES {
        find(
            LintRule::DescriptionTooLong,
            None,
            format!(
                "the description has {sentences} sentences; keep it to a few and move detail into parameter descriptions"
            ),
        );
    }
    for field in &tool.params().fields {
        let described = field.shape.description.as_deref().unwrap_or_default();
        if squash(described) == squash(&field.name) {
            find(
                LintRule::DescriptionRepeatsName,
                Some(&field.name),
                format!(
                    "\"{described}\" only repeats the name; say what the value means, its unit or format, and an example"
                ),
            );
        }
    }
}

fn is_snake_case(name: &str) -> bool {
    !name.is_empty()
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && !name.contains("__")
        && !name.ends_with('_')
}

fn to_snake_case(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c == '-' {
            out.push('_');
        } else if c.is_ascii_uppercase() {
            if i > 0 && !out.ends_with('_') {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// Lowercase letters and digits only, articles dropped: "The max results."
/// and `max_results` both become `maxresults`.
fn squash(text: &str) -> String {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty() && !matches!(w.to_lowercase().as_str(), "the" | "a" | "an"))
        .flat_map(|w| w.chars().map(|c| c.to_ascii_lowercase()))
        .collect()
}

/// The sentences of a text: pieces of two words or more ended by `.`, `!`
/// or `?` before a space or the end (so `.rs`, `e.g.` or a URL's dots end
/// none), and what follows the last.
fn count_sentences(text: &str) -> usize {
    let mut sentences = 0;
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let ends = matches!(c, '.' | '!' | '?') && chars.peek().is_none_or(|(_, next)| next.is_whitespace());
        if ends {
            sentences += usize::from(text[start..i].split_whitespace().count() >= 2);
            start = i + c.len_utf8();
        }
    }
    sentences += usize::from(text[start..].split_whitespace().count() >= 2);
    sentences.max(usize::from(!text.trim().is_empty()))
}

/// A tool name as the near-duplicate rule compares it.
struct ComparedName {
    squashed: String,
    /// The first word, when it is one of [`VERBS`].
    verb: Option<String>,
}

impl ComparedName {
    fn new(name: &str) -> Self {
        let first = name.split(|c: char| !c.is_alphanumeric()).next().unwrap_or_default();
        let first = first.to_ascii_lowercase();
        ComparedName {
            squashed: squash(name),
            verb: VERBS.contains(&first.as_str()).then_some(first),
        }
    }

    /// Names one edit apart (two when long) are easy to confuse, unless
    /// their verbs differ: `get_config` and `set_config` say what sets
    /// them apart.
    fn nearly_equals(&self, other: &ComparedName) -> bool {
        let (a, b) = (&self.squashed, &other.squashed);
        let allowed = 1 + usize::from(a.len().min(b.len()) > 12);
        if matches!((&self.verb, &other.verb), (Some(x), Some(y)) if x != y) || a.len().abs_diff(b.len()) > allowed {
            return a == b;
        }
        a == b || crate::text::edit_distance(a, b) <= allowed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snake_case_names() {
        assert!(is_snake_case("search_files"));
        assert!(!is_snake_case("searchFiles"));
        assert!(!is_snake_case("search-files"));
        assert_eq!(to_snake_case("searchFiles"), "search_files");
        assert_eq!(to_snake_case("search-files"), "search_files");
    }

    #[test]
    fn descriptions_that_repeat_names() {
        assert_eq!(squash("The max results."), squash("max_results"));
        assert_ne!(squash("Largest number of results"), squash("max_results"));
    }

    fn names_nearly_equal(a: &str, b: &str) -> bool {
        ComparedName::new(a).nearly_equals(&ComparedName::new(b))
    }

    #[test]
    fn near_duplicates() {
        assert!(names_nearly_equal("read_file", "read_files"));
        assert!(names_nearly_equal("get-user", "get_user"));
        assert!(names_nearly_equal("get_user_profile", "get_user_profiles"));
        assert!(!names_nearly_equal("read_file", "write_file"));
        // Verbs that differ say what sets the tools apart.
        assert!(!names_nearly_equal("get_config", "set_config"));
        assert!(!names_nearly_equal("get_user_profile", "set_user_profile"));
    }

    #[test]
    fn sentences_are_counted() {
        assert_eq!(count_sentences("Find files. Use it for names. Not for contents."), 3);
        assert_eq!(count_sentences("Find files"), 1);
        // Dots inside words end no sentence.
        assert_eq!(count_sentences("Use it for `.rs`, `.toml` and `.md` files."), 1);
        assert_eq!(
            count_sentences("Fetch a page such as https://example.com/a.html. Returns its text!"),
            2
        );
    }
}
