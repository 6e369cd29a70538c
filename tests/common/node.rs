//! The project's Node environment (the official MCP TypeScript SDK), made by
//! its own script, so a fresh machine needs nothing installed by hand.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The directory `scripts/node-env.sh` installs the SDK into (a no-op when
/// it is up to date), with `script` (a file of `tests/node/`) copied beside
/// its `node_modules`, where Node resolves the SDK from. Returns the copy.
pub fn script_in_env(root: &Path, script: &str) -> PathBuf {
    let out = Command::new("bash")
        .arg(root.join("scripts/node-env.sh"))
        .current_dir(root)
        .output()
        .expect("run bash scripts/node-env.sh");
    assert!(
        out.status.success(),
        "scripts/node-env.sh failed ({}): this test needs Node.js 20 or later with npm (and access to the npm \
         registry once) to drive our server with the official MCP TypeScript SDK\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let dir = PathBuf::from(stdout.lines().last().unwrap_or_default().trim());
    assert!(
        dir.join("node_modules").is_dir(),
        "scripts/node-env.sh did not end with its directory: {stdout:?}"
    );
    let copy = dir.join(script);
    std::fs::copy(root.join("tests/node").join(script), &copy).expect("copy the script into the Node environment");
    copy
}
