#!/usr/bin/env bash
# Creates (once) the Node environment that tests/mcp_server.rs uses to drive
# our MCP server with the official MCP TypeScript SDK client: target/node-env
# with tests/node/package-lock.json installed by `npm ci`.
#
# Idempotent: a stamp file records the hash of the lock file, so a later run
# with an unchanged lock does nothing. The last line printed on stdout is the
# environment's directory; everything else goes to stderr.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source_dir="$root/tests/node"
env_dir="$root/target/node-env"
stamp="$env_dir/.package-lock.sha256"

for tool in node npm; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "node-env: $tool is not installed; install Node.js 20 or later, with npm" >&2
        exit 1
    fi
done
if ! node -e 'process.exit(Number(process.versions.node.split(".")[0]) < 20 ? 1 : 0)'; then
    echo "node-env: Node.js $(node --version) is too old; the MCP SDK needs 20 or later" >&2
    exit 1
fi

hash_of() {
    if command -v sha256sum >/dev/null 2>&1; then
        sha256sum "$1" | cut -d' ' -f1
    else
        node -e 'const c=require("crypto"),f=require("fs");console.log(c.createHash("sha256").update(f.readFileSync(process.argv[1])).digest("hex"))' "$1"
    fi
}

wanted="$(hash_of "$source_dir/package-lock.json")"
ready() { [[ -f "$stamp" && "$(cat "$stamp")" == "$wanted" && -d "$env_dir/node_modules/@modelcontextprotocol/sdk" ]]; }
if ready; then
    echo "$env_dir"
    exit 0
fi

# Serialize concurrent runs where flock exists.
mkdir -p "$root/target"
if command -v flock >/dev/null 2>&1; then
    exec 9>"$root/target/node-env.lock"
    flock 9
    if ready; then
        echo "$env_dir"
        exit 0
    fi
fi

echo "node-env: setting up $env_dir" >&2
rm -rf "$env_dir"
mkdir -p "$env_dir"
cp "$source_dir/package.json" "$source_dir/package-lock.json" "$env_dir/"
(cd "$env_dir" && npm ci --no-audit --no-fund --loglevel=error >&2)
echo "$wanted" >"$stamp"
echo "node-env: ready" >&2
echo "$env_dir"
