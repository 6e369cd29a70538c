//! The project's Python environment (the official SDKs the tests check
//! against), made by its own script, so a fresh machine needs nothing
//! installed by hand.

// Each test binary uses some of these helpers, not all.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// The venv's python, set up by `scripts/python-env.sh` (a no-op when it
/// is up to date).
pub fn venv_python(root: &Path) -> PathBuf {
    match Command::new("python3").arg("--version").output() {
        Ok(out) if out.status.success() => {}
        Ok(out) => panic!(
            "`python3 --version` failed ({}): this test needs Python 3 with venv and pip to check our wire formats \
             against the providers' official SDKs\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(e) => panic!(
            "python3 is not installed ({e}): this test needs Python 3 with venv and pip (and access to PyPI once) \
             to check our wire formats against the providers' official SDKs; install python3 and rerun"
        ),
    }
    let out = Command::new("bash")
        .arg(root.join("scripts/python-env.sh"))
        .current_dir(root)
        .output()
        .expect("run bash scripts/python-env.sh");
    assert!(
        out.status.success(),
        "scripts/python-env.sh failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let python = PathBuf::from(stdout.lines().last().unwrap_or_default().trim());
    assert!(
        python.is_file(),
        "scripts/python-env.sh did not end with the venv's python: {stdout:?}"
    );
    python
}
