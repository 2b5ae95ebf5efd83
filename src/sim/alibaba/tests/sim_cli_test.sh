#!/usr/bin/env bash
# The `tessera sim` command line contract on a small inline trace: the JSON summary of one run
# and of a sweep, the CSV/JSON/HTML outputs, replay mode, and exit status 2 with a message naming
# the file, line and field on bad input.
#   sim_cli_test.sh TESSERA_BINARY TESTDATA_DIR
set -euo pipefail
tessera="$1"
data="$2"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
expect_in() { grep -q -- "$1" "$2" || fail "'$1' not in $2: $(head -c 600 "$2")"; }

"$tessera" sim --nodes "$data/nodes.csv" --pods "$data/pods.csv" --policy fgd --seed 42 \
  --inflate 1.3 --summary-json "$out/one.json" --metrics-csv "$out/curves.csv" \
  --metrics-json "$out/curves.json" --samples-csv "$out/samples.csv" --report "$out/r.html" \
  > "$out/stdout" || fail "single run exited $?"
for key in '"policy": "fgd"' '"seed": 42' '"unallocated_gpu_pct_at_100":' \
           '"fragment_pct_at_100":' '"frag_ratio_pct_at_100":' '"failed_tasks":' '"curves":'; do
  expect_in "$key" "$out/one.json"
done
expect_in "workload,policy,seed,x,gpu_alloc_pct" "$out/curves.csv"
[[ "$(wc -l < "$out/curves.csv")" -eq 132 ]] || fail "curves.csv should have 131 rows + header"
expect_in "policy,seed,arrival,placed" "$out/samples.csv"
expect_in "<svg" "$out/r.html"
expect_in "FGD" "$out/stdout"

"$tessera" sim --nodes "$data/nodes.csv" --pods "$data/pods.csv" --policies fgd,random \
  --seeds 1-3 --threads 2 --summary-json "$out/sweep.json" > /dev/null || fail "sweep failed"
expect_in '"policies":' "$out/sweep.json"
expect_in '"runs":' "$out/sweep.json"
expect_in '"median":' "$out/sweep.json"

"$tessera" sim --mode replay --nodes "$data/nodes.csv" --pods "$data/pods.csv" --policy bestfit \
  --sample-interval 10s --summary-json "$out/replay.json" --metrics-csv "$out/replay.csv" \
  > /dev/null || fail "replay failed"
expect_in '"placed_on_arrival": 5' "$out/replay.json"
expect_in "policy,seed,time_s,gpu_alloc_pct" "$out/replay.csv"

# Bad input: exit status 2 and a message naming the place.
set +e
"$tessera" sim --nodes "$data/nodes.csv" --pods "$data/bad_pods.csv" 2> "$out/err"
rc=$?
set -e
[[ $rc -eq 2 ]] || fail "bad gpu_spec: exit $rc, want 2"
expect_in "bad_pods.csv:2: gpu_spec: unknown GPU model 'H100'" "$out/err"
for args in "--policy nope" "--seeds 9-1" "--mode other" "--inflate -1" \
            "--summary-json $out/missing/x.json"; do
  set +e
  # shellcheck disable=SC2086
  "$tessera" sim --nodes "$data/nodes.csv" --pods "$data/pods.csv" $args 2> "$out/err" > /dev/null
  rc=$?
  set -e
  [[ $rc -eq 2 ]] || fail "'$args': exit $rc, want 2"
done
set +e
"$tessera" sim --nodes "$data/missing.csv" --pods "$data/pods.csv" 2> "$out/err"
rc=$?
set -e
[[ $rc -eq 2 ]] || fail "missing file: exit $rc, want 2"
expect_in "missing.csv: cannot open" "$out/err"
echo "sim_cli_test: ok"
