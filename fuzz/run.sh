#!/usr/bin/env bash
# Runs every fuzz target for a bounded time, with its seeds: `bash fuzz/run.sh [SECONDS]`
# (20 per target unless given). Installs cargo-fuzz when missing, builds all targets once, then
# runs them one after another. Exits non-zero when any target crashed; the crashing inputs are
# in fuzz/artifacts/TARGET/ and each target's log in fuzz/target/logs/. See fuzz/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-20}"
if ! [[ "$seconds" =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: bash fuzz/run.sh [SECONDS PER TARGET]" >&2
  exit 2
fi

# cargo-fuzz hands rustc nightly-only flags (-Zsanitizer=address, the sancov passes); the one
# stable toolchain takes them with RUSTC_BOOTSTRAP.
export RUSTC_BOOTSTRAP=1

if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "== installing cargo-fuzz"
  cargo install cargo-fuzz --locked
fi

echo "== building the fuzz targets"
cargo fuzz build

logs=fuzz/target/logs
mkdir -p "$logs"
failed=()
for target in $(cargo fuzz list); do
  # The generated corpus (ignored by git) grows from run to run; the seeds are read only.
  mkdir -p "fuzz/corpus/$target"
  options=(-max_total_time="$seconds" -timeout=10 -print_final_stats=1)
  if [[ -f "fuzz/dicts/$target.dict" ]]; then
    options+=(-dict="fuzz/dicts/$target.dict")
  fi
  log="$logs/$target.log"
  if cargo fuzz run "$target" "fuzz/corpus/$target" "fuzz/seeds/$target" -- "${options[@]}" \
    >"$log" 2>&1; then
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    echo "== $target: ${seconds} s, ${runs:-?} inputs, no crash"
  else
    failed+=("$target")
    echo "== $target: CRASHED (log: $log)"
    # The panic or sanitizer report, and where libFuzzer wrote the input.
    grep -E -A12 "panicked at|ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)" "$log" | head -40 || true
    grep -E "Test unit written to|Failing input" -A2 "$log" || tail -n 30 "$log"
  fi
done

if ((${#failed[@]})); then
  echo "fuzzing found crashes in: ${failed[*]}" >&2
  exit 1
fi
