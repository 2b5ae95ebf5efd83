#!/usr/bin/env bash
# Runs every libFuzzer target of a fuzz build for a bounded time each.
#   scripts/run-fuzzers.sh BUILD_DIR SECONDS
# Seed corpora come from fuzz/corpus/<name>/ and dictionaries from fuzz/<name>.dict when present;
# new inputs go to a scratch directory, never into the tree. A finding stops the run (exit 1).
set -euo pipefail
build=${1:?build dir}
seconds=${2:-20}
root=$(cd "$(dirname "$0")/.." && pwd)
found=0
for fuzzer in "$build"/fuzz/*_fuzzer; do
  [[ -x $fuzzer ]] || continue
  found=1
  name=$(basename "$fuzzer" _fuzzer)
  work=$(mktemp -d)
  corpus=()
  [[ -d $root/fuzz/corpus/$name ]] && corpus=("$root/fuzz/corpus/$name")
  dict=()
  [[ -f $root/fuzz/$name.dict ]] && dict=("-dict=$root/fuzz/$name.dict")
  echo "fuzz: $name for ${seconds}s"
  "$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 "${dict[@]}" \
    -artifact_prefix="$work/" "$work" "${corpus[@]}" 2>"$work/log" || {
    tail -40 "$work/log"
    echo "fuzz: $name found a failure; artifacts in $work" >&2
    exit 1
  }
  grep -E "^#[0-9]+.*(DONE|pulse)" "$work/log" | tail -1 || true
done
if ((found == 0)); then
  echo "fuzz: no fuzzers found in $build/fuzz" >&2
  exit 1
fi
