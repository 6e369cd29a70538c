//! The MCP server end to end, driven by the official MCP Python client over
//! stdio and streamable HTTP, with the session handshake (`initialize`) and
//! with protocol 2026-07-28 (`server/discover`): `tests/python/mcp_client.py`;
//! then by the official TypeScript SDK client over both transports:
//! `tests/node/mcp_client.mjs`.
//!
//! This test binary is also the server: started with `TOOL_RUNTIME_MCP_SERVE`
//! set to `stdio` or `http`, it serves its tools instead of testing. (It has
//! no libtest harness, whose output would corrupt the protocol stream.)

mod common {
    pub mod node;
    pub mod probe;
    pub mod python;
}

use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use tool_runtime::mcp::McpServer;
use tool_runtime::{Content, ToolContext, ToolParam, ToolRegistry, tool};

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

/// Naps that saw their cancellation.
static CANCELLED_NAPS: AtomicUsize = AtomicUsize::new(0);

/// Sleep for a while, then say how long.
#[tool]
async fn nap(
    #[param(description = "How long to sleep, in milliseconds", max = 30000)] millis: u64,
    ctx: ToolContext,
) -> String {
    // The registry raises the signal, then drops the call: the guard
    // sees the signal when it is dropped.
    struct Watch(ToolContext);
    impl Drop for Watch {
        fn drop(&mut self) {
            if self.0.cancellation().is_cancelled() {
                CANCELLED_NAPS.fetch_add(1, Ordering::SeqCst);
            }
        }
    }
    let _watch = Watch(ctx);
    tokio::time::sleep(Duration::from_millis(millis)).await;
    format!("slept {millis} ms")
}

/// Count the naps that were cancelled while they slept.
#[tool]
async fn cancelled_naps() -> u64 {
    CANCELLED_NAPS.load(Ordering::SeqCst) as u64
}

/// Compute for a while without ever yielding to the executor.
#[tool]
async fn busy(#[param(description = "How long to compute, in milliseconds", max = 10000)] millis: u64) -> String {
    let start = Instant::now();
    let mut spins = 0u64;
    while start.elapsed() < Duration::from_millis(millis) {
        spins = spins.wrapping_add(1);
        std::hint::spin_loop();
    }
    format!("computed for {millis} ms ({} spins)", spins.min(1))
}

/// Render a bar chart of the values as a PNG image.
#[tool]
async fn render_chart(#[param(description = "One bar per value")] values: Vec<f64>) -> Vec<Content> {
    vec![
        Content::text(format!("{} bars", values.len())),
        Content::image(b"\x89PNG\r\n\x1a\n", "image/png"),
    ]
}

fn serve(transport: &str) {
    let mut registry = ToolRegistry::new();
    registry
        .register(common::probe::Probe)
        .and_then(|r| r.register(DiskUsage))
        .and_then(|r| r.register(Nap))
        .and_then(|r| r.register(RenderChart))
        .and_then(|r| r.register(CancelledNaps))
        .and_then(|r| r.register(Busy))
        .expect("the test tools register");
    let server = McpServer::new(registry).with_info("tool-runtime-test", "0.0.0");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        if transport == "http" {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("a loopback port");
            // The driver reads the endpoint from this first line.
            println!("listening on http://{}/mcp", listener.local_addr().unwrap());
            server
                .serve_http_on(listener, tool_runtime::mcp::HttpOptions::new())
                .await
                .expect("serving http");
        } else {
            server.serve_stdio().await.expect("serving stdio");
        }
    });
}

fn main() {
    if let Ok(transport) = std::env::var("TOOL_RUNTIME_MCP_SERVE") {
        return serve(&transport);
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let python = common::python::venv_python(&root);
    let me = std::env::current_exe().expect("the test knows its own path");
    for transport in ["stdio", "http"] {
        println!("-- over {transport}");
        let output = Command::new(&python)
            .arg(root.join("tests/python/mcp_client.py"))
            .arg(transport)
            .arg(&me)
            .output()
            .expect("the venv's python runs");
        let stdout = String::from_utf8_lossy(&output.stdout);
        print!("{stdout}");
        assert!(
            output.status.success(),
            "the MCP client's checks over {transport} failed:\n{stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let client = common::node::script_in_env(&root, "mcp_client.mjs");
    for transport in ["stdio", "http"] {
        println!("-- TypeScript SDK over {transport}");
        let output = Command::new("node")
            .arg(&client)
            .arg(transport)
            .arg(&me)
            .output()
            .expect("node runs");
        let stdout = String::from_utf8_lossy(&output.stdout);
        print!("{stdout}");
        assert!(
            output.status.success(),
            "the TypeScript MCP client's checks over {transport} failed:\n{stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
}
