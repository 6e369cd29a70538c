//! The `mcpServers` configuration that Claude Desktop, Claude Code and the
//! Messages API wrappers read.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value};

use super::McpError;

/// External MCP servers to mount, by name, as written in an `mcpServers`
/// (or `mcp_servers`) object:
///
/// ```json
/// {"mcpServers": {
///   "files":   {"type": "stdio", "command": "node", "args": ["server.js"], "env": {"KEY": "value"}},
///   "weather": {"type": "http", "url": "http://localhost:3000/mcp", "headers": {"Authorization": "Bearer token"}},
///   "legacy":  {"type": "sse", "url": "http://localhost:3001/sse"}
/// }}
/// ```
///
/// `type` defaults to `stdio` when a `command` is given; a `url` without a
/// `type` is [`ServerEntry::Url`]: streamable HTTP, or the legacy SSE
/// transport when the endpoint refuses it. Each server's tools join a
/// registry under the prefix `<name>__` unless [`McpConfig::with_prefix`]
/// says otherwise.
///
/// As Claude Code reads its `.mcp.json`, `${NAME}` in a `command`, an
/// `args` item, an `env` or `headers` value, a `url` or a `cwd` is the
/// environment variable `NAME`, and `${NAME:-default}` is `default` when
/// it is unset or empty; a variable that is unset and has no default is a
/// configuration error naming it. `$NAME` without braces stays as written.
///
/// The Messages API's list form is read too: `"mcp_servers": [{"type":
/// "url", "url": "...", "name": "...", "authorization_token": "...",
/// "tool_configuration": {"enabled": true, "allowed_tools": ["..."]}}]`.
#[derive(Clone, Debug)]
pub struct McpConfig {
    pub(crate) servers: BTreeMap<String, ServerEntry>,
    pub(crate) prefixes: BTreeMap<String, String>,
    /// Per server, the only tools mounted (by their remote names).
    pub(crate) allowed: BTreeMap<String, BTreeSet<String>>,
    pub(crate) separator: String,
    pub(crate) connect_timeout: Duration,
}

/// How to reach one server.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ServerEntry {
    /// A process that speaks MCP on its stdin and stdout.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Variables added to the inherited environment.
        env: BTreeMap<String, String>,
        /// The working directory, if not this process's.
        cwd: Option<PathBuf>,
    },
    /// A streamable HTTP endpoint.
    Http {
        /// The endpoint's URL, `http://` or `https://` (TLS by rustls,
        /// with the platform's certificate roots).
        url: String,
        /// Headers sent with every request (`Authorization`, say).
        headers: BTreeMap<String, String>,
    },
    /// An HTTP endpoint of either transport: streamable HTTP is tried
    /// first and, when that fails, the legacy HTTP+SSE transport, as the
    /// MCP specification tells clients to for servers of both revisions.
    /// What a configuration's `url` without a `type` (or with the
    /// Messages API's `"type": "url"`) reads as.
    Url {
        /// The endpoint's URL, `http://` or `https://`.
        url: String,
        /// Headers sent with every request.
        headers: BTreeMap<String, String>,
    },
    /// A legacy HTTP+SSE endpoint (protocol revision 2024-11-05): an event
    /// stream read with `GET`, whose `endpoint` event names where messages
    /// are posted (on the same origin). `http://` or `https://`, as
    /// [`ServerEntry::Http`].
    Sse {
        /// The SSE endpoint's URL.
        url: String,
        /// Headers sent with every request.
        headers: BTreeMap<String, String>,
    },
}

impl Default for McpConfig {
    fn default() -> Self {
        McpConfig {
            servers: BTreeMap::new(),
            prefixes: BTreeMap::new(),
            allowed: BTreeMap::new(),
            separator: "__".into(),
            connect_timeout: Duration::from_secs(60),
        }
    }
}

impl McpConfig {
    /// No servers yet; add them with [`McpConfig::with_server`].
    pub fn new() -> Self {
        McpConfig::default()
    }

    /// Reads a configuration: an object with `mcpServers` or `mcp_servers`,
    /// or the map of servers itself; the servers by name, or as a list of
    /// entries that carry their `name`. An entry with `"disabled": true`
    /// (as Cline and others write), or the Messages API's
    /// `"tool_configuration": {"enabled": false}`, is left out.
    pub fn from_json(value: &Value) -> Result<Self, McpError> {
        McpConfig::read(value, &|name| std::env::var(name).ok())
    }

    /// [`McpConfig::from_json`], with `${NAME}` read from `variables`.
    fn read(value: &Value, variables: &Variables<'_>) -> Result<Self, McpError> {
        let Value::Object(root) = value else {
            return Err(McpError::config("an MCP configuration must be a JSON object"));
        };
        if root.contains_key("mcpServers") && root.contains_key("mcp_servers") {
            return Err(McpError::config(
                "an MCP configuration has both `mcpServers` and `mcp_servers`; keep one of them",
            ));
        }
        let listed: Vec<Named<'_>> = match root.get("mcpServers").or_else(|| root.get("mcp_servers")) {
            Some(Value::Object(servers)) => by_name(servers)?,
            Some(Value::Array(servers)) => listed_by_name(servers)?,
            Some(_) => {
                return Err(McpError::config(
                    "`mcpServers` must be an object of servers by name, or a list of servers with a `name`",
                ));
            }
            None => by_name(root)?,
        };
        let mut config = McpConfig::default();
        for (name, entry) in listed {
            let in_context = |e: String| McpError::config(format!("server `{name}`: {e}"));
            let tools = entry.get("tool_configuration").and_then(Value::as_object);
            let disabled = entry.get("disabled") == Some(&Value::Bool(true))
                || tools.is_some_and(|t| t.get("enabled") == Some(&Value::Bool(false)));
            if disabled {
                continue;
            }
            if let Some(allowed) = tools.and_then(|t| t.get("allowed_tools")).filter(|a| !a.is_null()) {
                let allowed =
                    strings(allowed).ok_or_else(|| in_context("`allowed_tools` must be a list of strings".into()))?;
                config.allowed.insert(name.clone(), allowed.into_iter().collect());
            }
            let entry = ServerEntry::read(entry, variables).map_err(in_context)?;
            config.servers.insert(name, entry);
        }
        Ok(config)
    }

    /// Reads a configuration file (JSON).
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, McpError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path)
            .map_err(|e| McpError::config(format!("cannot read {}: {e}", path.display())))?;
        let value: Value = serde_json::from_str(&text)
            .map_err(|e| McpError::config(format!("{} is not JSON: {e}", path.display())))?;
        McpConfig::from_json(&value).map_err(|e| McpError::config(format!("{}: {e}", path.display())))
    }

    /// Adds or replaces a server.
    pub fn with_server(mut self, name: impl Into<String>, entry: ServerEntry) -> Self {
        self.servers.insert(name.into(), entry);
        self
    }

    /// Mounts `server`'s tools as `<prefix><separator><tool>`, or under
    /// their own names when `prefix` is empty.
    pub fn with_prefix(mut self, server: impl Into<String>, prefix: impl Into<String>) -> Self {
        self.prefixes.insert(server.into(), prefix.into());
        self
    }

    /// How long starting or reaching a server, with its handshake, may
    /// take, and then again listing its tools (page by page, at most 100
    /// pages, until 1,000 tools are kept); 60 seconds by default (a server
    /// fetched by `npx -y` or `uvx` on its first start can take that long).
    pub fn with_connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Mounts only the tools of `server` named in `tools` (their names on
    /// the server, before any prefix); without it, every tool it lists.
    pub fn with_allowed_tools<I, S>(mut self, server: impl Into<String>, tools: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.allowed
            .insert(server.into(), tools.into_iter().map(Into::into).collect());
        self
    }

    /// Whether `server`'s tool `tool` (its remote name) is mounted.
    pub(crate) fn allows(&self, server: &str, tool: &str) -> bool {
        self.allowed.get(server).is_none_or(|allowed| allowed.contains(tool))
    }

    /// What joins a prefix and a tool name; `__` by default.
    pub fn with_separator(mut self, separator: impl Into<String>) -> Self {
        self.separator = separator.into();
        self
    }

    /// The servers, by name, in name order.
    pub fn servers(&self) -> impl Iterator<Item = (&str, &ServerEntry)> {
        self.servers.iter().map(|(name, entry)| (name.as_str(), entry))
    }

    /// The names the tools `tools` of `server` get in the registry: each a
    /// provider name (`^[a-zA-Z0-9_-]{1,64}$`), other characters made `_`.
    /// Where that makes names alike (`read.file` beside `read_file`, two
    /// CJK names of one length), each name it changed ends in `_` and a
    /// hash of the name as written, so they stay apart; names it left as
    /// they were keep them. A name that would be longer is shortened part
    /// by part, the tool's part to at most 40 characters and the prefix to
    /// what is left, each part cut ending in a hash of the whole part, so
    /// different tools (or servers) keep different names.
    ///
    /// `assigned` holds the names the server's tools were given before, by
    /// remote name: a tool listed again keeps its name, so a refresh never
    /// moves a name from one remote tool to another (`read.file` mounted
    /// as `files__read_file` keeps it when `read_file` joins the list; the
    /// newcomer is the one that gets a hash).
    pub(crate) fn local_names(&self, server: &str, tools: &[&str], assigned: &HashMap<String, String>) -> Vec<String> {
        let kept: Vec<Option<&str>> = tools
            .iter()
            .map(|tool| assigned.get(*tool).map(String::as_str))
            .collect();
        distinct_names(tools, &kept, is_allowed, &|cleaned| self.local_name(server, cleaned))
    }

    /// The name of the tool `tool` (provider characters only) of `server`:
    /// prefixed, and shortened to 64 characters.
    fn local_name(&self, server: &str, tool: &str) -> String {
        const MAX: usize = 64;
        let prefix = self.prefixes.get(server).map_or(server, String::as_str);
        if prefix.is_empty() {
            return fit(tool, MAX);
        }
        let (prefix, separator) = (allowed_chars(prefix), allowed_chars(&self.separator));
        let whole = format!("{prefix}{separator}{tool}");
        if whole.len() <= MAX {
            return whole;
        }
        let tool = fit(tool, 40);
        match MAX.checked_sub(separator.len() + tool.len()) {
            Some(room) if room >= 8 => format!("{}{separator}{tool}", fit(&prefix, room)),
            // A separator too long to leave the prefix room.
            _ => fit(&whole, MAX),
        }
    }
}

/// Whether a provider name allows `c`.
fn is_allowed(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// Whether a property key every provider accepts allows `c` (a name's
/// characters and `.`: Anthropic's `^[a-zA-Z0-9_.-]{1,64}$`).
fn is_allowed_in_key(c: char) -> bool {
    is_allowed(c) || c == '.'
}

/// `text` with every character `allowed` refuses made `_`.
fn cleaned(text: &str, allowed: fn(char) -> bool) -> String {
    text.chars().map(|c| if allowed(c) { c } else { '_' }).collect()
}

/// `text` with every character a provider name does not allow made `_`.
fn allowed_chars(text: &str) -> String {
    cleaned(text, is_allowed)
}

/// The names of `raw` (names as a server wrote them), made of characters
/// `allowed` admits: each is `make` of the name with every other character
/// made `_` (`make` adds a prefix, or cuts to a length). A name `kept`
/// gives (by index) is used as it is. Where names come out alike, each
/// that is not kept, and was changed by the clean-up or is alike a kept
/// one, is made again from its cleaned name, `_` and the [`short_hash`] of
/// the name as written, so they stay apart; a name left as it was keeps
/// it. Tool names and property keys are both made here.
fn distinct_names(
    raw: &[&str],
    kept: &[Option<&str>],
    allowed: fn(char) -> bool,
    make: &dyn Fn(&str) -> String,
) -> Vec<String> {
    let mut names: Vec<String> = raw
        .iter()
        .zip(kept)
        .map(|(name, kept)| match kept {
            Some(kept) => (*kept).to_owned(),
            None => make(&cleaned(name, allowed)),
        })
        .collect();
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for name in &names {
        *seen.entry(name.as_str()).or_default() += 1;
    }
    let taken: HashSet<&str> = kept.iter().flatten().copied().collect();
    let again: Vec<bool> = raw
        .iter()
        .zip(kept)
        .zip(&names)
        .map(|((name, kept), made)| {
            let changed = name.is_empty() || !name.chars().all(allowed);
            kept.is_none() && seen[made.as_str()] > 1 && (changed || taken.contains(made.as_str()))
        })
        .collect();
    for ((made, name), again) in names.iter_mut().zip(raw).zip(again) {
        if again {
            *made = make(&format!("{}_{}", cleaned(name, allowed), short_hash(name)));
        }
    }
    names
}

/// The local keys of a remote tool's property keys `keys`: a key every
/// provider accepts (`^[a-zA-Z0-9_.-]{1,64}$`) stays as it is; any other
/// (`$filter`, `file path`, `größe`, one of 70 characters) is made one as
/// a tool name is: its other characters made `_`, cut to 64 characters
/// with a hash of the whole, and, where that makes it alike another key,
/// ended in a hash of the key as written.
pub(crate) fn local_keys(keys: &[&str]) -> Vec<String> {
    const MAX: usize = 64;
    let kept = vec![None; keys.len()];
    distinct_names(keys, &kept, is_allowed_in_key, &|cleaned| {
        // An empty key is made `_` (with a hash when a key `_` is there too).
        let cleaned = if cleaned.is_empty() { "_" } else { cleaned };
        fit(cleaned, MAX)
    })
}

/// `text` (ASCII) if it has at most `max` characters; else its start, `_`
/// and the [`short_hash`] of the whole, `max` in all.
fn fit(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    format!("{}_{}", &text[..max - 7], short_hash(text))
}

/// 6 hex digits of a hash of `text` (FNV-1a).
fn short_hash(text: &str) -> String {
    let hash = text.bytes().fold(0x811c_9dc5_u32, |hash, byte| {
        (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193)
    });
    format!("{:06x}", hash & 0x00ff_ffff)
}

/// Reads an environment variable; `None` when it is unset.
type Variables<'a> = dyn Fn(&str) -> Option<String> + 'a;

/// A server's name and its entry as written.
type Named<'a> = (String, &'a Map<String, Value>);

/// The entries of a map of servers by name.
fn by_name(servers: &Map<String, Value>) -> Result<Vec<Named<'_>>, McpError> {
    servers
        .iter()
        .map(|(name, entry)| match entry {
            Value::Object(entry) => Ok((name.clone(), entry)),
            _ => Err(McpError::config(format!("server `{name}`: an entry must be an object"))),
        })
        .collect()
}

/// The entries of a list of servers, each naming itself; a name given
/// twice is an error.
fn listed_by_name(servers: &[Value]) -> Result<Vec<Named<'_>>, McpError> {
    let mut seen = BTreeSet::new();
    let mut listed = Vec::with_capacity(servers.len());
    for (index, entry) in servers.iter().enumerate() {
        let Value::Object(entry) = entry else {
            return Err(McpError::config(format!(
                "server {index} of the list: an entry must be an object"
            )));
        };
        let Some(Value::String(name)) = entry.get("name") else {
            return Err(McpError::config(format!(
                "server {index} of the list: an entry of a list needs a `name` (a string)"
            )));
        };
        if !seen.insert(name.as_str()) {
            return Err(McpError::config(format!("server `{name}` is listed twice")));
        }
        listed.push((name.clone(), entry));
    }
    Ok(listed)
}

/// The strings of a JSON list; `None` when it is no list of strings.
fn strings(value: &Value) -> Option<Vec<String>> {
    value
        .as_array()?
        .iter()
        .map(|item| item.as_str().map(str::to_owned))
        .collect()
}

impl ServerEntry {
    fn read(entry: &Map<String, Value>, variables: &Variables<'_>) -> Result<Self, String> {
        let text = |key: &str| -> Result<Option<String>, String> {
            match entry.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => expand(s, variables).map(Some).map_err(|e| format!("`{key}`: {e}")),
                Some(_) => Err(format!("`{key}` must be a string")),
            }
        };
        let ty = match text("type")? {
            Some(ty) => ty,
            None if entry.contains_key("command") => "stdio".into(),
            None if entry.contains_key("url") => "url".into(),
            None => return Err("an entry needs a `command` or a `url`".into()),
        };
        let url = |ty: &str| text("url")?.ok_or_else(|| format!("an {ty} server needs a `url`"));
        match ty.as_str() {
            "stdio" => {
                let command = text("command")?.ok_or("a stdio server needs a `command`")?;
                let args = match entry.get("args") {
                    None | Some(Value::Null) => Vec::new(),
                    Some(args) => strings(args)
                        .ok_or("`args` must be a list of strings")?
                        .iter()
                        .map(|arg| expand(arg, variables).map_err(|e| format!("`args`: {e}")))
                        .collect::<Result<_, _>>()?,
                };
                Ok(ServerEntry::Stdio {
                    command,
                    args,
                    env: string_map(entry, "env", variables)?,
                    cwd: text("cwd")?.map(PathBuf::from),
                })
            }
            "http" | "streamable-http" | "streamableHttp" => Ok(ServerEntry::Http {
                url: url("http")?,
                headers: headers(entry, variables)?,
            }),
            "sse" => Ok(ServerEntry::Sse {
                url: url("sse")?,
                headers: headers(entry, variables)?,
            }),
            "url" => Ok(ServerEntry::Url {
                url: url("url")?,
                headers: headers(entry, variables)?,
            }),
            other => Err(format!(
                "unknown server type `{other}`; expected stdio, http, sse or url"
            )),
        }
    }
}

/// An entry's `headers`, with the Messages API's `authorization_token`
/// as a bearer token.
fn headers(entry: &Map<String, Value>, variables: &Variables<'_>) -> Result<BTreeMap<String, String>, String> {
    let mut headers = string_map(entry, "headers", variables)?;
    match entry.get("authorization_token") {
        None | Some(Value::Null) => {}
        Some(Value::String(token)) => {
            let token = expand(token, variables).map_err(|e| format!("`authorization_token`: {e}"))?;
            headers.insert("Authorization".into(), format!("Bearer {token}"));
        }
        Some(_) => return Err("`authorization_token` must be a string".into()),
    }
    Ok(headers)
}

fn string_map(
    entry: &Map<String, Value>,
    key: &str,
    variables: &Variables<'_>,
) -> Result<BTreeMap<String, String>, String> {
    match entry.get(key) {
        None | Some(Value::Null) => Ok(BTreeMap::new()),
        Some(Value::Object(map)) => map
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => {
                    let value = expand(s, variables).map_err(|e| format!("`{key}.{k}`: {e}"))?;
                    Ok((k.clone(), value))
                }
                _ => Err(format!("`{key}.{k}` must be a string")),
            })
            .collect(),
        Some(_) => Err(format!("`{key}` must be an object of strings")),
    }
}

/// `text` with each `${NAME}` replaced by the variable's value, and each
/// `${NAME:-default}` by its value or, when it is unset or empty,
/// `default` (as written: a default is not expanded again). What is no
/// such reference (`$NAME`, a `${` never closed, a name that is no
/// variable name) stays as written; a variable that is unset and has no
/// default is an error naming it.
fn expand(text: &str, variables: &Variables<'_>) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return Ok(out);
        };
        let inner = &after[..end];
        let (name, default) = match inner.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (inner, None),
        };
        if is_variable_name(name) {
            match (variables(name).filter(|v| default.is_none() || !v.is_empty()), default) {
                (Some(value), _) => out.push_str(&value),
                (None, Some(default)) => out.push_str(default),
                (None, None) => {
                    return Err(format!(
                        "the environment variable `{name}` is not set (write `${{{name}:-default}}` to give a default)"
                    ));
                }
            }
        } else {
            out.push_str(&rest[start..start + 2 + end + 1]);
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// A name a shell would read as a variable's: a letter or `_`, then
/// letters, digits and `_`.
fn is_variable_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn reads_every_entry_type_and_both_keys() {
        let config = McpConfig::from_json(&json!({"mcp_servers": {
            "files": {"command": "node", "args": ["server.js"], "env": {"KEY": "v"}},
            "weather": {"type": "http", "url": "http://localhost:3000/mcp", "headers": {"Authorization": "Bearer t"}},
            "legacy": {"type": "sse", "url": "http://localhost:3001/sse"},
        }}))
        .unwrap();
        let names: Vec<&str> = config.servers().map(|(n, _)| n).collect();
        assert_eq!(names, ["files", "legacy", "weather"]);
        let off = McpConfig::from_json(&json!({"mcpServers": {
            "on": {"command": "a", "disabled": false},
            "off": {"command": "b", "disabled": true},
        }}))
        .unwrap();
        assert_eq!(off.servers().map(|(n, _)| n).collect::<Vec<_>>(), ["on"]);
        assert!(matches!(&config.servers["files"], ServerEntry::Stdio { command, .. } if command == "node"));
        assert!(matches!(&config.servers["legacy"], ServerEntry::Sse { .. }));
        let config = config.with_prefix("files", "");
        assert_eq!(local_name(&config, "files", "read"), "read");
    }

    /// The local name of one tool, named alone.
    fn local_name(config: &McpConfig, server: &str, tool: &str) -> String {
        config.local_names(server, &[tool], &HashMap::new()).remove(0)
    }

    #[test]
    fn names_made_alike_by_clean_up_stay_apart() {
        let config = McpConfig::default();
        // Alone, a name is cleaned and nothing more.
        assert_eq!(local_name(&config, "files", "read.file"), "files__read_file");
        let names = config.local_names(
            "files",
            &["read_file", "read.file", "read/file", "list"],
            &HashMap::new(),
        );
        assert_eq!(names[0], "files__read_file", "a name left as it was keeps it");
        for name in &names[1..3] {
            assert!(name.starts_with("files__read_file_"), "{name}");
            assert_eq!(name.len(), "files__read_file_".len() + 6, "{name}");
        }
        assert_ne!(names[1], names[2]);
        assert_eq!(names[3], "files__list");
        let names = config.local_names("s", &["读文件", "写文件"], &HashMap::new());
        assert_ne!(names[0], names[1]);
        assert!(names.iter().all(|name| name.starts_with("s_____")), "{names:?}");
        // A separator is only made allowed.
        let dotted = McpConfig::default().with_separator(".");
        assert_eq!(local_name(&dotted, "files", "read"), "files_read");
        let long = config.local_names(&"服".repeat(40), &[&"务".repeat(40), &"务".repeat(41)], &HashMap::new());
        assert_ne!(long[0], long[1]);
        for name in names.iter().chain(&long) {
            assert!(name.len() <= 64 && name.chars().all(is_allowed), "{name}");
        }
    }

    /// A name given before stays with its remote tool: a newcomer that
    /// would take it is the one that gets a hash.
    #[test]
    fn names_given_before_are_kept() {
        let config = McpConfig::default();
        let assigned = HashMap::from([("read.file".to_owned(), "files__read_file".to_owned())]);
        let names = config.local_names("files", &["read_file", "read.file", "list"], &assigned);
        assert_eq!(names[1], "files__read_file");
        assert!(names[0].starts_with("files__read_file_"), "{names:?}");
        assert_eq!(names[0].len(), "files__read_file_".len() + 6, "{names:?}");
        assert_eq!(names[2], "files__list");
        // Without it, the clean name is the one that keeps it.
        let fresh = config.local_names("files", &["read_file", "read.file"], &HashMap::new());
        assert_eq!(fresh[0], "files__read_file");
    }

    /// Property keys are made as tool names are, with `.` allowed.
    #[test]
    fn keys_no_provider_accepts_get_local_keys() {
        let long = "k".repeat(70);
        let keys = local_keys(&["$filter", "_filter", "file path", "a.b-c", "größe", &long, ""]);
        assert_eq!(keys[1], "_filter", "a valid key keeps its name");
        assert!(keys[0].starts_with("_filter_") && keys[0] != keys[1], "{keys:?}");
        assert_eq!(keys[2], "file_path");
        assert_eq!(keys[3], "a.b-c");
        assert_eq!(keys[4], "gr__e");
        assert_eq!(keys[5].len(), 64);
        assert_eq!(keys[6], "_");
        let distinct: HashSet<&String> = keys.iter().collect();
        assert_eq!(distinct.len(), keys.len(), "{keys:?}");
        for key in &keys {
            assert!(
                (1..=64).contains(&key.len()) && key.chars().all(is_allowed_in_key),
                "{key}"
            );
        }
    }

    #[test]
    fn long_names_are_cut_and_stay_distinct() {
        let config = McpConfig::default();
        let server = "github.com/modelcontextprotocol/servers/tree/main/src/filesystem";
        let names: Vec<String> = ["get-resource-links", "get-resource-reference", "read"]
            .iter()
            .map(|tool| local_name(&config, server, tool))
            .collect();
        for name in &names {
            assert!(name.len() <= 64, "{name}");
            assert!(
                name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'),
                "{name}"
            );
        }
        assert_eq!(names[0].len(), 64);
        assert!(
            names[0].ends_with("__get-resource-links"),
            "the tool's name is kept: {}",
            names[0]
        );
        assert!(names[1].ends_with("__get-resource-reference"), "{}", names[1]);
        assert!(names[2].starts_with("github_com_"), "{}", names[2]);
        // Two long servers that share their start, and long tools of one.
        let other = local_name(&config, &format!("{server}-two"), "read");
        assert_ne!(other, names[2]);
        let long_tool = "a".repeat(50);
        let (one, two) = (
            local_name(&config, "s", &format!("{long_tool}1")),
            local_name(&config, "s", &format!("{long_tool}2")),
        );
        assert_ne!(one, two);
        assert_eq!(
            local_name(&config, "s", "read"),
            "s__read",
            "short names are kept as they are"
        );
        let unprefixed = local_name(&config.with_prefix("s", ""), "s", &"b".repeat(80));
        assert_eq!(unprefixed.len(), 64);
    }

    #[test]
    fn reads_the_messages_api_list_form() {
        let config = McpConfig::from_json(&json!({"mcp_servers": [
            {"type": "url", "url": "https://a.example/mcp", "name": "a", "authorization_token": "secret",
             "tool_configuration": {"enabled": true, "allowed_tools": ["read"]}},
            {"type": "url", "url": "https://b.example/sse", "name": "b", "tool_configuration": {"enabled": false}},
            {"url": "https://c.example/mcp", "name": "c"},
        ]}))
        .unwrap();
        assert_eq!(config.servers().map(|(n, _)| n).collect::<Vec<_>>(), ["a", "c"]);
        let ServerEntry::Url { url, headers } = &config.servers["a"] else {
            panic!("a url entry: {:?}", config.servers["a"]);
        };
        assert_eq!(url, "https://a.example/mcp");
        assert_eq!(headers["Authorization"], "Bearer secret");
        assert!(config.allows("a", "read") && !config.allows("a", "write"));
        assert!(config.allows("c", "anything"), "no filter, every tool");
        assert!(matches!(&config.servers["c"], ServerEntry::Url { .. }));

        let twice = json!({"mcp_servers": [{"url": "http://a", "name": "a"}, {"url": "http://b", "name": "a"}]});
        let e = McpConfig::from_json(&twice).unwrap_err();
        assert!(e.to_string().contains("server `a` is listed twice"), "{e}");
        let unnamed = json!({"mcp_servers": [{"url": "http://a"}]});
        let e = McpConfig::from_json(&unnamed).unwrap_err();
        assert!(e.to_string().contains("needs a `name`"), "{e}");
        let bad_filter =
            json!({"mcp_servers": [{"url": "http://a", "name": "a", "tool_configuration": {"allowed_tools": "read"}}]});
        let e = McpConfig::from_json(&bad_filter).unwrap_err();
        assert!(
            e.to_string().contains("server `a`: `allowed_tools` must be a list"),
            "{e}"
        );
        let both = json!({"mcpServers": {"a": {"url": "http://a"}}, "mcp_servers": [{"url": "http://b", "name": "b"}]});
        let e = McpConfig::from_json(&both).unwrap_err();
        assert!(e.to_string().contains("both `mcpServers` and `mcp_servers`"), "{e}");
    }

    #[test]
    fn expands_environment_variables_as_claude_code_does() {
        let variables = |name: &str| match name {
            "HOME" => Some("/home/me".to_owned()),
            "TOKEN" => Some("t0k".to_owned()),
            "EMPTY" => Some(String::new()),
            _ => None,
        };
        let config = McpConfig::read(
            &json!({"mcpServers": {
                "files": {"command": "${HOME}/bin/server", "args": ["--root=${HOME}", "$HOME", "${PORT:-8080}", "${EMPTY:-fallback}", "${EMPTY}"],
                          "env": {"KEY": "${TOKEN}", "PLAIN": "a${b"}, "cwd": "${HOME}"},
                "web": {"type": "http", "url": "http://${HOST:-localhost}:3000/mcp", "headers": {"Authorization": "Bearer ${TOKEN}", "X": "${not a name}"}},
            }}),
            &variables,
        )
        .unwrap();
        assert_eq!(
            config.servers["files"],
            ServerEntry::Stdio {
                command: "/home/me/bin/server".into(),
                args: ["--root=/home/me", "$HOME", "8080", "fallback", ""]
                    .map(String::from)
                    .to_vec(),
                env: BTreeMap::from([("KEY".into(), "t0k".into()), ("PLAIN".into(), "a${b".into())]),
                cwd: Some(PathBuf::from("/home/me")),
            }
        );
        assert_eq!(
            config.servers["web"],
            ServerEntry::Http {
                url: "http://localhost:3000/mcp".into(),
                headers: BTreeMap::from([
                    ("Authorization".into(), "Bearer t0k".into()),
                    ("X".into(), "${not a name}".into())
                ]),
            }
        );
        let unset =
            json!({"mcpServers": {"web": {"url": "http://a", "headers": {"Authorization": "Bearer ${API_KEY}"}}}});
        let e = McpConfig::read(&unset, &variables).unwrap_err();
        assert!(
            e.to_string()
                .contains("server `web`: `headers.Authorization`: the environment variable `API_KEY` is not set"),
            "{e}"
        );
    }

    #[test]
    fn refuses_what_it_cannot_read() {
        let e = McpConfig::from_json(&json!({"mcpServers": {"x": {"type": "ws", "url": "ws://a"}}})).unwrap_err();
        assert!(e.to_string().contains("server `x`: unknown server type `ws`"), "{e}");
        let e = McpConfig::from_json(&json!({"mcpServers": {"x": {"args": []}}})).unwrap_err();
        assert!(e.to_string().contains("needs a `command` or a `url`"), "{e}");
    }
}
