//! Mounts the tools of the MCP servers a configuration names, prints their
//! definitions in a provider's format, and calls one when asked.
//!
//! ```text
//! cargo run --example mcp_mount -- CONFIG.json
//! cargo run --example mcp_mount -- CONFIG.json --format openai-chat --strict
//! cargo run --example mcp_mount -- CONFIG.json --call files__read_text_file '{"path": "README.md"}'
//! ```
//!
//! CONFIG.json is what Claude Desktop or Claude Code read:
//! `{"mcpServers": {"files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."]}}}`.
//! `--format` is one of `anthropic` (the default), `openai-chat`,
//! `openai-responses`, `gemini`, `mcp`. Only `--call` runs a tool (with `{}`
//! when no arguments follow; a refused call shows the binder's errors):
//! listing never runs a remote tool, whatever it does.

use std::process::ExitCode;

use serde_json::Value;
use tool_runtime::ToolRegistry;
use tool_runtime::format::{Format, Selection};
use tool_runtime::mcp::{McpConfig, McpMounts};

const USAGE: &str = "usage: mcp_mount CONFIG.json [--format anthropic|openai-chat|openai-responses|gemini|mcp] [--strict] [--call NAME [ARGS_JSON]]";

#[tokio::main]
async fn main() -> ExitCode {
    let mut config = None;
    let mut format = "anthropic".to_owned();
    let mut strict = false;
    let mut call: Option<(String, String)> = None;
    let mut args = std::env::args().skip(1).peekable();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--format" => format = args.next().unwrap_or_default(),
            "--strict" => strict = true,
            "--call" => {
                let name = args.next().unwrap_or_default();
                let arguments = match args.peek() {
                    Some(next) if !next.starts_with("--") => args.next().unwrap_or_default(),
                    _ => "{}".to_owned(),
                };
                call = Some((name, arguments));
            }
            "--help" | "-h" => {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            path if config.is_none() && !path.starts_with("--") => config = Some(path.to_owned()),
            other => {
                eprintln!("unknown argument `{other}`\n{USAGE}");
                return ExitCode::FAILURE;
            }
        }
    }
    let Some(path) = config else {
        eprintln!("{USAGE}");
        return ExitCode::FAILURE;
    };
    let Some(format) = Format::from_name(&format, strict) else {
        eprintln!("unknown format `{format}`\n{USAGE}");
        return ExitCode::FAILURE;
    };
    let config = match McpConfig::from_file(&path) {
        Ok(config) => config,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    // Strict definitions make the model send `null` for what it leaves unset.
    let mut registry = ToolRegistry::new().with_strict_definitions(strict);
    let mounts = match McpMounts::mount(&mut registry, config).await {
        Ok(mounts) => mounts,
        Err(e) => {
            eprintln!("mounting failed: {e}");
            return ExitCode::FAILURE;
        }
    };
    for failure in mounts.failures() {
        eprintln!("left out `{}`: {}", failure.name, failure.error);
    }
    for server in mounts.servers() {
        let version = server.protocol_version.as_deref().unwrap_or("?");
        eprintln!(
            "mounted `{}` (protocol {version}): {}",
            server.name,
            server.tools.join(", ")
        );
    }
    let definitions = registry.definitions(format, &Selection::all());
    println!(
        "{}",
        serde_json::to_string_pretty(&definitions).expect("JSON values serialize")
    );

    let Some((name, arguments)) = call else {
        mounts.close().await;
        return ExitCode::SUCCESS;
    };
    let result = registry.call(&name, arguments).await.with_warnings_shown();
    let summary = serde_json::json!({
        "tool": result.tool(),
        "is_error": result.is_error,
        "text": result.text(),
        "structured_content": result.structured_content.clone().unwrap_or(Value::Null),
        "warnings": result.warning_codes(),
        "errors": result.error_codes(),
    });
    eprintln!("called `{name}`:");
    println!(
        "{}",
        serde_json::to_string_pretty(&summary).expect("JSON values serialize")
    );
    // Servers are shut down as the protocol asks, not killed on exit.
    mounts.close().await;
    ExitCode::SUCCESS
}
