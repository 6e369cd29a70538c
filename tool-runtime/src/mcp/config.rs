//! The `mcpServers` configuration that Claude Desktop, Claude Code and the
//! Messages API wrappers read.

use std::collections::BTreeMap;
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
/// `type` defaults to `stdio` when a `command` is given, to `http` when a
/// `url` is. Each server's tools join a registry under the prefix
/// `<name>__` unless [`McpConfig::with_prefix`] says otherwise.
#[derive(Clone, Debug)]
pub struct McpConfig {
    pub(crate) servers: BTreeMap<String, ServerEntry>,
    pub(crate) prefixes: BTreeMap<String, String>,
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
    /// or the map of servers itself. An entry with `"disabled": true` (as
    /// Cline and others write) is left out.
    pub fn from_json(value: &Value) -> Result<Self, McpError> {
        let Value::Object(root) = value else {
            return Err(McpError::config("an MCP configuration must be a JSON object"));
        };
        let servers = match root.get("mcpServers").or_else(|| root.get("mcp_servers")) {
            Some(Value::Object(servers)) => servers,
            Some(_) => return Err(McpError::config("`mcpServers` must be an object of servers by name")),
            None => root,
        };
        let mut config = McpConfig::default();
        for (name, entry) in servers {
            if entry.get("disabled") == Some(&Value::Bool(true)) {
                continue;
            }
            let entry = ServerEntry::from_json(entry).map_err(|e| McpError::config(format!("server `{name}`: {e}")))?;
            config.servers.insert(name.clone(), entry);
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
    /// take, and then again listing its tools (every page of them, at most
    /// 100 pages); 60 seconds by default (a server fetched by `npx -y` or
    /// `uvx` on its first start can take that long).
    pub fn with_connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
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

    /// The name a server's tool gets in the registry: a provider name
    /// (`^[a-zA-Z0-9_-]{1,64}$`), other characters made `_`. A name that
    /// would be longer is shortened part by part, the tool's part to at most
    /// 40 characters and the prefix to what is left, each part cut ending in
    /// a hash of the whole part, so different tools (or servers) keep
    /// different names.
    pub(crate) fn local_name(&self, server: &str, tool: &str) -> String {
        const MAX: usize = 64;
        let prefix = self.prefixes.get(server).map_or(server, String::as_str);
        let tool = provider_chars(tool);
        if prefix.is_empty() {
            return fit(&tool, MAX);
        }
        let (prefix, separator) = (provider_chars(prefix), provider_chars(&self.separator));
        let whole = format!("{prefix}{separator}{tool}");
        if whole.len() <= MAX {
            return whole;
        }
        let tool = fit(&tool, 40);
        match MAX.checked_sub(separator.len() + tool.len()) {
            Some(room) if room >= 8 => format!("{}{separator}{tool}", fit(&prefix, room)),
            // A separator too long to leave the prefix room.
            _ => fit(&whole, MAX),
        }
    }
}

/// `text` with every character a provider name does not allow made `_`.
fn provider_chars(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// `text` (ASCII) if it has at most `max` characters; else its start, `_`
/// and 6 hex digits of a hash of the whole (FNV-1a), `max` in all.
fn fit(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let hash = text.bytes().fold(0x811c_9dc5_u32, |hash, byte| {
        (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193)
    });
    format!("{}_{:06x}", &text[..max - 7], hash & 0x00ff_ffff)
}

impl ServerEntry {
    fn from_json(value: &Value) -> Result<Self, String> {
        let Value::Object(entry) = value else {
            return Err("an entry must be an object".into());
        };
        let text = |key: &str| -> Result<Option<String>, String> {
            match entry.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(_) => Err(format!("`{key}` must be a string")),
            }
        };
        let ty = match text("type")? {
            Some(ty) => ty,
            None if entry.contains_key("command") => "stdio".into(),
            None if entry.contains_key("url") => "http".into(),
            None => return Err("an entry needs a `command` or a `url`".into()),
        };
        match ty.as_str() {
            "stdio" => {
                let command = text("command")?.ok_or("a stdio server needs a `command`")?;
                let args = match entry.get("args") {
                    None | Some(Value::Null) => Vec::new(),
                    Some(Value::Array(args)) => args
                        .iter()
                        .map(|a| a.as_str().map(str::to_owned).ok_or("`args` must be strings"))
                        .collect::<Result<_, _>>()?,
                    Some(_) => return Err("`args` must be a list of strings".into()),
                };
                Ok(ServerEntry::Stdio {
                    command,
                    args,
                    env: string_map(entry, "env")?,
                    cwd: text("cwd")?.map(PathBuf::from),
                })
            }
            "http" | "streamable-http" | "streamableHttp" => Ok(ServerEntry::Http {
                url: text("url")?.ok_or("an http server needs a `url`")?,
                headers: string_map(entry, "headers")?,
            }),
            "sse" => Ok(ServerEntry::Sse {
                url: text("url")?.ok_or("an sse server needs a `url`")?,
                headers: string_map(entry, "headers")?,
            }),
            other => Err(format!("unknown server type `{other}`; expected stdio, http or sse")),
        }
    }
}

fn string_map(entry: &Map<String, Value>, key: &str) -> Result<BTreeMap<String, String>, String> {
    match entry.get(key) {
        None | Some(Value::Null) => Ok(BTreeMap::new()),
        Some(Value::Object(map)) => map
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => Ok((k.clone(), s.clone())),
                _ => Err(format!("`{key}.{k}` must be a string")),
            })
            .collect(),
        Some(_) => Err(format!("`{key}` must be an object of strings")),
    }
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
        assert_eq!(config.local_name("files", "read.file"), "files__read_file");
        let config = config.with_prefix("files", "");
        assert_eq!(config.local_name("files", "read"), "read");
    }

    #[test]
    fn long_names_are_cut_and_stay_distinct() {
        let config = McpConfig::default();
        let server = "github.com/modelcontextprotocol/servers/tree/main/src/filesystem";
        let names: Vec<String> = ["get-resource-links", "get-resource-reference", "read"]
            .iter()
            .map(|tool| config.local_name(server, tool))
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
        let other = config.local_name(&format!("{server}-two"), "read");
        assert_ne!(other, names[2]);
        let long_tool = "a".repeat(50);
        let (one, two) = (
            config.local_name("s", &format!("{long_tool}1")),
            config.local_name("s", &format!("{long_tool}2")),
        );
        assert_ne!(one, two);
        assert_eq!(
            config.local_name("s", "read"),
            "s__read",
            "short names are kept as they are"
        );
        let unprefixed = config.with_prefix("s", "").local_name("s", &"b".repeat(80));
        assert_eq!(unprefixed.len(), 64);
    }

    #[test]
    fn refuses_what_it_cannot_read() {
        let e = McpConfig::from_json(&json!({"mcpServers": {"x": {"type": "ws", "url": "ws://a"}}})).unwrap_err();
        assert!(e.to_string().contains("server `x`: unknown server type `ws`"), "{e}");
        let e = McpConfig::from_json(&json!({"mcpServers": {"x": {"args": []}}})).unwrap_err();
        assert!(e.to_string().contains("needs a `command` or a `url`"), "{e}");
    }
}
