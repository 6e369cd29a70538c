#!/usr/bin/env bash
# SPEC section 7's compile-time bound: the `cargo build` time per #[tool]
# function in a crate of 100 tools, against the same functions without the
# attribute. Generates both crates under target/compile-time, builds their
# dependencies once, then times a rebuild of each crate alone (debug
# profile, the edit-compile loop a tool author lives in), best of RUNS.
#
#   scripts/compile-time.sh [TOOLS] [RUNS]     (default 100 tools, 3 runs)
#
# Wall-clock times swing with the machine's load, so where valgrind is
# installed it also counts the instructions rustc executes for the same
# rebuild of each crate (callgrind; about a minute), which do not.
#
# A third crate, the tools again with the macros compiled optimized
# (`[profile.dev.build-override] opt-level = 3`, the README's tip), shows
# what that setting saves: about a quarter of the cost is the macro itself,
# which Cargo otherwise compiles unoptimized.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tools="${1:-100}"
runs="${2:-3}"
work="$root/target/compile-time"
mkdir -p "$work"

generate() { # $1: crate dir, $2: "tool" or "plain", $3: "optimized macros" or ""
    local dir="$1" kind="$2" optimized="${3:-}"
    mkdir -p "$dir/src"
    cat >"$dir/Cargo.toml" <<TOML
[package]
name = "compile-time-$kind${optimized:+-optimized}"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
tool-runtime = { path = "$root/tool-runtime" }
serde = { version = "1", features = ["derive"] }

[workspace]
TOML
    if [[ -n "$optimized" ]]; then
        printf '\n[profile.dev.build-override]\nopt-level = 3\n' >>"$dir/Cargo.toml"
    fi
    {
        echo "#![allow(dead_code, unused_variables)]"
        if [[ "$kind" == tool ]]; then
            echo "use tool_runtime::{tool, ToolError};"
        else
            echo "use tool_runtime::ToolError;"
        fi
        for i in $(seq 1 "$tools"); do
            echo "/// Search the workspace, variant $i."
            [[ "$kind" == tool ]] && echo "#[tool]"
            local attr=""
            echo "pub async fn search_$i("
            for p in pattern:String case_sensitive:bool max_results:u32 root:Option\<String\> extensions:Vec\<String\>; do
                local name="${p%%:*}" ty="${p#*:}"
                if [[ "$kind" == tool ]]; then
                    case "$name" in
                        case_sensitive) attr="#[param(description = \"Match case\", default = true)]" ;;
                        max_results) attr="#[param(description = \"Largest number\", default = 100, min = 1, max = 10_000)]" ;;
                        extensions) attr="#[param(description = \"Extensions\", default)]" ;;
                        *) attr="#[param(description = \"The $name\")]" ;;
                    esac
                fi
                echo "    $attr $name: $ty,"
            done
            echo ") -> Result<Vec<String>, ToolError> { Ok(vec![pattern]) }"
        done
    } >"$dir/src/lib.rs"
}

time_build() { # $1: crate dir; prints the best rebuild time in ms
    local dir="$1" best=""
    (cd "$dir" && CARGO_TARGET_DIR="$work/target" cargo build --quiet)
    for _ in $(seq 1 "$runs"); do
        touch "$dir/src/lib.rs"
        local start end ms
        start=$(date +%s%N)
        (cd "$dir" && CARGO_TARGET_DIR="$work/target" cargo build --quiet)
        end=$(date +%s%N)
        ms=$(( (end - start) / 1000000 ))
        if [[ -z "$best" || "$ms" -lt "$best" ]]; then best="$ms"; fi
    done
    echo "$best"
}

generate "$work/with" tool
generate "$work/without" plain
generate "$work/with-optimized" tool "optimized macros"
with=$(time_build "$work/with")
without=$(time_build "$work/without")
optimized=$(time_build "$work/with-optimized")
per=$(python3 -c "print(f'{($with - $without) / $tools:.1f}')")
per_optimized=$(python3 -c "print(f'{($optimized - $without) / $tools:.1f}')")
echo "compile time, $tools functions: with #[tool] $with ms, without $without ms: $per ms per tool (target: at most 5)"
echo "  with the macros optimized (build-override opt-level 3): $optimized ms: $per_optimized ms per tool"

instructions() { # $1: crate dir; prints the instructions of rustc's rebuild
    local dir="$1" command
    touch "$dir/src/lib.rs"
    command=$(cd "$dir" && CARGO_TARGET_DIR="$work/target" cargo build -v 2>&1 | sed -n 's/^ *Running `\(.*rustc .*\)`$/\1/p' | tail -1)
    touch "$dir/src/lib.rs"
    (cd "$dir" && CARGO_TARGET_DIR="$work/target" eval "valgrind --tool=callgrind --callgrind-out-file=/dev/null $command" 2>&1 >/dev/null) |
        sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}

if command -v valgrind >/dev/null 2>&1; then
    with_ir=$(instructions "$work/with")
    without_ir=$(instructions "$work/without")
    optimized_ir=$(instructions "$work/with-optimized")
    python3 -c "print(f'instructions (callgrind), rebuild: with #[tool] {$with_ir / 1e9:.2f} G, without {$without_ir / 1e9:.2f} G: {($with_ir - $without_ir) / $tools / 1e6:.1f} M per tool')"
    python3 -c "print(f'  with the macros optimized: {$optimized_ir / 1e9:.2f} G: {($optimized_ir - $without_ir) / $tools / 1e6:.1f} M per tool')"
fi
