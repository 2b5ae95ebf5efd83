#!/usr/bin/env bash
# The `tessera sim --swf` command line contract on a small inline log: one line per mode, the
# JSON summary, and exit status 2 with a message naming the flag on bad input.
#   swf_cli_test.sh TESSERA_BINARY
set -euo pipefail
tessera="$1"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
expect_in() { grep -q -- "$1" "$2" || fail "'$1' not in $2: $(head -c 600 "$2")"; }

# 4 nodes; job 2 (4 processors) waits for job 1; job 3 fits beside job 1; job 4 never runs.
cat > "$out/t.swf" <<'EOF'
; MaxNodes: 4
; MaxProcs: 4
1  0 -1 100 3 -1 -1 -1  -1 -1 1 1 1 -1 1 2 -1 -1
2 10 -1 100 4 -1 -1 -1 200 -1 1 1 1 -1 1 2 -1 -1
3 20 -1  10 1 -1 -1 -1  50 -1 1 1 2 -1 2 3 -1 -1
4 30 -1   0 1 -1 -1 -1  -1 -1 0 1 1 -1 1 2 -1 -1
EOF

"$tessera" sim --swf "$out/t.swf" --summary-json "$out/all.json" > "$out/stdout" ||
  fail "--backfill all exited $?"
expect_in "3 jobs of 4 read (skipped: 1 run time <= 0 or unknown); 4 processors on 4 nodes" \
  "$out/stdout"
for mode in fcfs easy conservative; do expect_in "^$mode " "$out/stdout"; done
[[ "$(wc -l < "$out/stdout")" -eq 5 ]] || fail "want a title, a header and 3 rows"
for key in '"mode": "fcfs"' '"mode": "easy"' '"mode": "conservative"' '"jobs_kept": 3' \
           '"mean_bounded_slowdown":' '"utilisation":' '"makespan_s": 200.0' '"completed": 3'; do
  expect_in "$key" "$out/all.json"
done

# Greedy order without backfill: job 3 starts at once; job 2 waits 90 s. Mean wait 30 s.
"$tessera" sim --swf "$out/t.swf" --backfill none --queues-from partition --fair-share none \
  --limit 3 --cpus-per-node 2 > "$out/stdout" || fail "--backfill none exited $?"
expect_in "4 processors on 2 nodes of 2 cpu; queues from partition" "$out/stdout"
expect_in "^none  *3  *3  *30.0 " "$out/stdout"

"$tessera" sim --swf "$out/t.swf" --backfill none --skip 2 --arrival-speedup 2 > "$out/stdout" ||
  fail "--skip exited $?"
expect_in "1 jobs of 2 read" "$out/stdout"
"$tessera" sim --swf "$out/t.swf" --backfill none --processors 3 > "$out/stdout" ||
  fail "--processors exited $?"
expect_in "2 jobs of 4 read (skipped: 1 more processors than the cluster, 1 run time" "$out/stdout"

# Two clusters of 2 processors: jobs 1 and 2 (3 and 4 processors) fit neither; one line per
# cluster.
"$tessera" sim --swf "$out/t.swf" --backfill easy --clusters 2 --site-placement pinned \
  --cost-tiers --summary-json "$out/mc.json" > "$out/stdout" || fail "--clusters exited $?"
expect_in "1 jobs of 4 read (skipped: 2 more processors than the largest cluster" "$out/stdout"
expect_in "in 2 clusters (sites pinned, cost tiers)" "$out/stdout"
expect_in "^  cluster-0 " "$out/stdout"
expect_in "^  cluster-1 " "$out/stdout"
for key in '"clusters": 2' '"site_placement": "pinned"' '"name": "cluster-1"' \
           '"peak_processors":' '"jobs_away": 0' '"split_jobs": 0'; do
  expect_in "$key" "$out/mc.json"
done

# Bad input: exit status 2 and a message naming the flag.
bad() {
  local want="$1"
  shift
  set +e
  "$tessera" sim "$@" > /dev/null 2> "$out/err"
  local rc=$?
  set -e
  [[ $rc -eq 2 ]] || fail "'$*': exit $rc, want 2"
  expect_in "$want" "$out/err"
}
bad "--backfill: unknown mode 'fast'" --swf "$out/t.swf" --backfill fast
bad "--fifo:" --swf "$out/t.swf" --fifo
bad "--queues-from: must be single, queue, partition or group, not 'site'" \
  --swf "$out/t.swf" --queues-from site
bad "--fair-share: must be drf or none" --swf "$out/t.swf" --fair-share fair
bad "--limit" --swf "$out/t.swf" --limit 0
bad "--skip" --swf "$out/t.swf" --skip -1
bad "--cpus-per-node" --swf "$out/t.swf" --cpus-per-node 0
bad "--processors" --swf "$out/t.swf" --processors 0
bad "--swf: " --swf "$out/missing.swf"
bad "--policy does not apply to --swf" --swf "$out/t.swf" --policy fgd
bad "--scenario does not apply to --swf" --swf "$out/t.swf" --scenario x.yaml
bad "--fifo applies to --swf only" --scenario x.yaml --fifo
bad "--summary-json: directory" --swf "$out/t.swf" --summary-json "$out/missing/x.json"
printf '1 0 -1 10 1 -1 -1 -1 -1 -1 1 1 1 -1 -1 -1 -1 -2\n' > "$out/bad.swf"
bad "bad.swf:1: think_time" --swf "$out/bad.swf"
bad "none of the 1 jobs read can run" --swf "$out/t.swf" --skip 3
bad "--site-placement: must be any, preferred or pinned, not 'home'" \
  --swf "$out/t.swf" --clusters 2 --site-placement home
bad "--site-placement: needs --clusters 2 or more" --swf "$out/t.swf" --site-placement pinned
bad "--cost-tiers: needs --clusters 2 or more" --swf "$out/t.swf" --cost-tiers
bad "clusters: must be at most the processors (4), got 5" --swf "$out/t.swf" --clusters 5
bad "--clusters" --swf "$out/t.swf" --clusters 0
bad "--clusters applies to --swf only" --scenario x.yaml --clusters 2

echo "swf_cli_test: ok"
