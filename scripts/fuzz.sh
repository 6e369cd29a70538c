#!/usr/bin/env bash
# Runs the coverage-guided fuzz targets of fuzz/ (cargo-fuzz, libFuzzer).
#
#   scripts/fuzz.sh                  every target, 60 seconds each
#   scripts/fuzz.sh bind_raw         one target, 60 seconds
#   scripts/fuzz.sh bind_raw 600     one target, 10 minutes
#   scripts/fuzz.sh all 30           every target, 30 seconds each
#
# Installs cargo-fuzz when missing. cargo-fuzz needs nightly-only rustc
# flags (sanitizers); RUSTC_BOOTSTRAP=1 allows them on the pinned stable
# toolchain. Each run starts from the checked-in seeds (fuzz/corpus/<target>)
# and keeps what it finds in target/fuzz-corpus/<target>, so the seeds stay
# as reviewed. A crash leaves its input in fuzz/artifacts/<target>/; minimise
# it with `RUSTC_BOOTSTRAP=1 cargo fuzz tmin <target> <file>` from fuzz/.
# Not part of `cargo test` or CI.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
target="${1:-all}"
seconds="${2:-60}"

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "fuzz: installing cargo-fuzz" >&2
    cargo install cargo-fuzz --locked
fi

cd "$root/fuzz"
export RUSTC_BOOTSTRAP=1

if [ "$target" = all ]; then
    mapfile -t targets < <(cargo fuzz list)
else
    targets=("$target")
fi

if [ "$target" = all ]; then
    cargo fuzz build
else
    cargo fuzz build "$target"
fi
status=0
for t in "${targets[@]}"; do
    scratch="$root/target/fuzz-corpus/$t"
    log="$root/target/fuzz-logs/$t.log"
    mkdir -p "$scratch" "$(dirname "$log")"
    echo "fuzz: $t for ${seconds}s" >&2
    if ! cargo fuzz run "$t" "$scratch" "corpus/$t" -- -max_total_time="$seconds" -print_final_stats=1 \
        >"$log" 2>&1; then
        status=1
        echo "fuzz: $t FAILED; see $log and fuzz/artifacts/$t/" >&2
        tail -n 30 "$log" >&2
    fi
    runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)"
    speed="$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)"
    cov="$(grep -o 'cov: [0-9]*' "$log" | tail -n 1)"
    printf '%-24s %10s execs/s %12s runs  %s\n' "$t" "${speed:-?}" "${runs:-?}" "${cov:-}"
done
exit "$status"
