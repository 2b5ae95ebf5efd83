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
expect_in '"packing_bound":' "$out/sweep.json"
expect_in '"unallocated_gpu_pct_at_100_median":' "$out/sweep.json"

# --policies all: the paper's six, FGD-CPU and the bound, on stdout and in the report.
"$tessera" sim --nodes "$data/nodes.csv" --pods "$data/pods.csv" --policies all --seeds 1-2 \
  --threads 2 --report "$out/all.html" > "$out/all.stdout" || fail "--policies all failed"
expect_in "FGD-CPU" "$out/all.stdout"
expect_in "bound (LP)" "$out/all.stdout"
expect_in "FGD-CPU" "$out/all.html"
expect_in "Packing bound" "$out/all.html"

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

# Exit status 2 and a message naming the flag, before any run starts ("timeout": NaN used to loop).
expect_bad() {  # expect_bad MESSAGE ARGS...
  local want="$1" rc
  shift
  set +e
  timeout 60 "$tessera" sim "$@" > /dev/null 2> "$out/err"
  rc=$?
  set -e
  [[ $rc -eq 2 ]] || fail "'$*': exit $rc, want 2"
  expect_in "$want" "$out/err"
}
trace=(--nodes "$data/nodes.csv" --pods "$data/pods.csv")
expect_bad "--inflate: must be a finite number" "${trace[@]}" --no-expected --inflate nan
expect_bad "--inflate" "${trace[@]}" --inflate inf
expect_bad "--typical-threshold: must be a finite number" "${trace[@]}" --typical-threshold nan
expect_bad "--typical-threshold: must be in (0, 100]" "${trace[@]}" --typical-threshold 0
expect_bad "--typical-threshold" "${trace[@]}" --typical-threshold 101
expect_bad "--arrival-speedup: must be a finite number" "${trace[@]}" --mode replay \
  --arrival-speedup nan
# Flags that do not apply to the kind of run.
scenario="$data/../../../../../tests/scenarios/gang-min-available.yaml"
for flag in "--seeds 1-2" "--policy fgd" "--policies all" "--inflate 1.3" "--report $out/r.html" \
            "--summary-json $out/s.json" "--nodes $data/nodes.csv" "--pods $data/pods.csv" \
            "--mode paper" "--threads 2" "--progress" "--no-expected"; do
  # shellcheck disable=SC2086
  expect_bad "${flag%% *} does not apply to --scenario" --scenario "$scenario" $flag
done
expect_bad "--sample-interval does not apply to --mode paper" "${trace[@]}" --sample-interval 1h
expect_bad "--arrival-speedup does not apply to --mode paper" "${trace[@]}" --arrival-speedup 2
for flag in "--samples-csv $out/s.csv" "--no-node-shuffle" "--inflate 1.3" "--threads 2" \
            "--no-expected"; do
  # shellcheck disable=SC2086
  expect_bad "${flag%% *} does not apply to --mode replay" "${trace[@]}" --mode replay $flag
done
# Seeds and policy lists.
expect_bad "--seed: not a seed: '-1'" --scenario "$scenario" --seed -1
expect_bad "--seed: not a seed: '-1'" "${trace[@]}" --seed -1
expect_bad "--seed: seed '99999999999999999999999' is out of range" "${trace[@]}" \
  --seed 99999999999999999999999
expect_bad "--seeds: not a seed: '-5'" "${trace[@]}" --seeds -5
expect_bad "--seeds: " "${trace[@]}" --seeds ""
expect_bad "--seeds: seed 2 given twice" "${trace[@]}" --seeds 1-3,2
expect_bad "--seeds: range 51-42 ends before it starts" "${trace[@]}" --seeds 51-42
expect_bad "--policies: empty policy name in ','" "${trace[@]}" --policies ,
expect_bad "--policies: empty policy name" "${trace[@]}" --policies fgd,
expect_bad "--policy: empty policy name" "${trace[@]}" --policy ""
expect_bad "--policies: empty policy name" "${trace[@]}" --policies ""
expect_bad "--policies: 'all' stands for a list of policies and must be given alone" \
  "${trace[@]}" --policies all,fgd
expect_bad "--policy: 'all' stands for a list of policies: give it as --policies all" \
  "${trace[@]}" --policy all
expect_bad "--policies: unknown policy 'nope'" "${trace[@]}" --policies fgd,nope
expect_bad "--policies: policy 'fgd' given twice" "${trace[@]}" --policies fgd,fgd
# Inputs that are not trace files.
expect_bad "$out: is a directory" --nodes "$data/nodes.csv" --pods "$out"
printf 'sn,cpu_milli,memory_mib,gpu,model\nn,1000,1024,1,T4|V100\n' > "$out/pipe_nodes.csv"
expect_bad "pipe_nodes.csv:2: model: must not contain '|'" --nodes "$out/pipe_nodes.csv" \
  --pods "$data/pods.csv"

# Replay's time means are exact, whatever the sample interval: 25.83% on pods.csv.
for interval in 1h 10s 1ms; do
  "$tessera" sim --mode replay "${trace[@]}" --sample-interval "$interval" \
    > "$out/replay_$interval" || fail "replay --sample-interval $interval failed"
  expect_in "GPU allocation 25.83%" "$out/replay_$interval"
done

# --progress counts to the real total of arrivals over every run (seeds inflate differently).
"$tessera" sim "${trace[@]}" --no-expected --policies fgd,random --seeds 1-6 --inflate 2.7 \
  --threads 2 --progress --summary-json "$out/progress.json" > /dev/null 2> "$out/progress" \
  || fail "--progress sweep failed"
total=$(grep -o '"arrived_tasks": [0-9]*' "$out/progress.json" | awk '{s += $2} END {print s}')
expect_in "100% $total/$total arrivals" "$out/progress"

# The help's scenario example exists.
"$tessera" sim --help > "$out/help"
example=$(grep -o -- '--scenario [^ ]*\.yaml' "$out/help" | head -1 | cut -d' ' -f2)
[[ -n "$example" && -f "$data/../../../../../$example" ]] || fail "help example '$example' missing"
expect_in "config.seed" "$out/help"
echo "sim_cli_test: ok"
