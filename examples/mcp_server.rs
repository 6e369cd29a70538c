//! Serves the example tools over MCP on stdin and stdout.
//!
//! ```text
//! cargo run --example mcp_server
//! ```
//!
//! Point an MCP client at it, e.g. in a client's server list:
//! `{"command": "cargo", "args": ["run", "-q", "--example", "mcp_server"]}`.
//! Logs go to stderr; stdout carries the protocol.

#[path = "shared/tools.rs"]
mod tools;

use tool_runtime::mcp_server::McpServer;

#[tokio::main]
async fn main() -> std::io::Result<()> {
    eprintln!("serving the example tools over MCP on stdio");
    McpServer::new(tools::registry())
        .with_info("tool-runtime-example", env!("CARGO_PKG_VERSION"))
        .with_instructions("Tools over an in-memory workspace: search and read files, file issues.")
        .serve_stdio()
        .await
}
