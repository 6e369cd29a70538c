//! Serves the example tools over MCP, on stdin and stdout or over
//! streamable HTTP.
//!
//! ```text
//! cargo run --example mcp_server                          # stdio
//! cargo run --example mcp_server -- --http 127.0.0.1:8808 # http://127.0.0.1:8808/mcp
//! ```
//!
//! Logs go to stderr; on stdio, stdout carries the protocol. Over HTTP the
//! first line on stderr names the endpoint (`listening on http://...`), and
//! `--token SECRET` makes it require `Authorization: Bearer SECRET`.

#[path = "shared/tools.rs"]
mod tools;

use std::net::SocketAddr;

use tool_runtime::mcp::{HttpOptions, McpServer};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut http: Option<SocketAddr> = None;
    let mut token = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--http" => {
                http = Some(
                    args.next()
                        .ok_or("--http needs an address such as 127.0.0.1:8808")?
                        .parse()?,
                )
            }
            "--token" => token = Some(args.next().ok_or("--token needs a value")?),
            other => return Err(format!("unknown argument `{other}`; expected --http ADDR [--token SECRET]").into()),
        }
    }
    let server = McpServer::new(tools::registry())
        .with_info("tool-runtime-example", env!("CARGO_PKG_VERSION"))
        .with_instructions("Tools over an in-memory workspace: search and read files, file issues.");
    match http {
        None => {
            eprintln!("serving the example tools over MCP on stdio");
            server.serve_stdio().await?;
        }
        Some(addr) => {
            let listener = tokio::net::TcpListener::bind(addr).await?;
            eprintln!("listening on http://{}/mcp", listener.local_addr()?);
            let options = match token {
                Some(token) => HttpOptions::new().bearer_token(token),
                None => HttpOptions::new(),
            };
            server.serve_http_on(listener, options).await?;
        }
    }
    Ok(())
}
