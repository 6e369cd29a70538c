//! The MCP server end to end, driven by the official MCP Python client over
//! stdio (`tests/python/mcp_client.py`).
//!
//! This test binary is also the server: started with `TOOL_RUNTIME_MCP_SERVE`
//! set, it serves its tools on stdin and stdout instead of testing. (It has
//! no libtest harness, whose output would corrupt the protocol stream.)

mod common {
    pub mod probe;
}

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tool_runtime::mcp_server::McpServer;
use tool_runtime::{Content, ToolParam, ToolRegistry, tool};

/// One mounted file system.
#[derive(Serialize, Deserialize, ToolParam)]
struct Mount {
    /// Where it is mounted.
    path: String,
    /// Its label, if it has one.
    label: Option<String>,
    /// How full it is, from 0 to 1.
    used: f64,
}

/// How full the disks are.
#[derive(Serialize, Deserialize, ToolParam)]
struct Usage {
    /// Every mounted file system.
    mounts: Vec<Mount>,
}

/// Report how full each disk of the machine is.
#[tool(read_only = true, idempotent = true)]
async fn disk_usage() -> Usage {
    Usage {
        mounts: vec![
            Mount {
                path: "/".into(),
                label: Some("root".into()),
                used: 0.42,
            },
            Mount {
                path: "/data".into(),
                label: None,
                used: 0.9,
            },
        ],
    }
}

/// Sleep for a while, then say how long.
#[tool]
async fn nap(#[param(description = "How long to sleep, in milliseconds", max = 5000)] millis: u64) -> String {
    tokio::time::sleep(Duration::from_millis(millis)).await;
    format!("slept {millis} ms")
}

/// Render a bar chart of the values as a PNG image.
#[tool]
async fn render_chart(#[param(description = "One bar per value")] values: Vec<f64>) -> Vec<Content> {
    vec![
        Content::text(format!("{} bars", values.len())),
        Content::image(b"\x89PNG\r\n\x1a\n", "image/png"),
    ]
}

fn serve() {
    let mut registry = ToolRegistry::new();
    registry
        .register(common::probe::Probe)
        .and_then(|r| r.register(DiskUsage))
        .and_then(|r| r.register(Nap))
        .and_then(|r| r.register(RenderChart))
        .expect("the test tools register");
    let server = McpServer::new(registry).with_info("tool-runtime-test", "0.0.0");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(server.serve_stdio()).expect("serving stdio");
}

fn main() {
    if std::env::var_os("TOOL_RUNTIME_MCP_SERVE").is_some() {
        return serve();
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let setup = Command::new("bash")
        .arg(root.join("scripts/python-env.sh"))
        .output()
        .expect("bash runs scripts/python-env.sh");
    assert!(
        setup.status.success(),
        "scripts/python-env.sh failed:\n{}",
        String::from_utf8_lossy(&setup.stderr)
    );
    let python = String::from_utf8_lossy(&setup.stdout)
        .lines()
        .last()
        .unwrap_or_default()
        .trim()
        .to_owned();
    let me = std::env::current_exe().expect("the test knows its own path");
    let output = Command::new(&python)
        .arg(root.join("tests/python/mcp_client.py"))
        .arg(&me)
        .output()
        .expect("the venv's python runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    print!("{stdout}");
    assert!(
        output.status.success(),
        "the MCP client's checks failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
