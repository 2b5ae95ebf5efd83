#!/usr/bin/env bash
# Submit→placed latency of a live control plane at a steady arrival rate. Starts `tessera server
# --dev` as scripts/bench-server.sh does (the Alibaba trace's 1,213 nodes as the simulated
# cluster `sim`, no rate limit, the durable SQLite store with synchronous=FULL), then CLIENTS
# concurrent `tessera replay --rate RATE/CLIENTS` processes submit real pods of the trace, one
# job per REST request (POST /api/v1/jobs, answered once the job is durable), RATE jobs per
# second in all for SECONDS seconds. Run times are scaled to ~1 ms (--speedup 1e9), so the
# cluster never fills: a job waits for the control plane (its durable submission, the loop, the
# scheduling cycle), never for capacity. Each client replays its own window of rows under its
# own trace name (a link to the pod list, so request ids and names do not repeat); a client can
# take at most as many jobs as the pod list has rows (8,152): RATE x SECONDS / CLIENTS must not
# exceed that.
#
# What is measured, per job, on the server's clock: from its submission (status.submitTime, the
# instant the server accepted the request, before its durable commit) to the placement of its
# gang (its "Placed" event, the scheduler's decision) — and, beside it, to its start (its
# "Running" event: bound, launched on the simulated cluster and reported started). After the
# last answer the script waits until every submitted job has been placed (the server's
# tessera_job_placement_latency_seconds_count), reads every job's events over REST
# (GET /api/v1/jobs/{id}/events) and prints exact percentiles (nearest rank) of the jobs of the
# run, then the estimate Prometheus' histogram_quantile would give from /metrics' buckets. The
# server's clock counts milliseconds, so both are to the millisecond (0 ms: the same tick).
# "submit→running" counts the jobs that have a Running event (a job the server never saw start
# has none).
# "achieved" is the arrival rate the server saw: (jobs - 1) / (last submitTime - first).
#
#   scripts/bench-latency.sh BUILD_DIR TRACE_DIR [RATE] [SECONDS] [CLIENTS]   (1000 30 8)
set -euo pipefail
BUILD=${1:?build directory}
TRACES=${2:?trace directory}
RATE=${3:-1000}
DURATION=${4:-30}
CLIENTS=${5:-8}
WAIT=${WAIT:-120}
PODS=$(realpath -m "$TRACES/alibaba-gpu-v2023/openb_pod_list_default.csv")  # linked from the data directory
NODES="$TRACES/alibaba-gpu-v2023/openb_node_list_gpu_node.csv"
positive='^[0-9]+([.][0-9]+)?$'
[[ $RATE =~ $positive ]] && (($(echo "$RATE > 0" | bc))) || { echo "RATE: must be a positive number of jobs per second, not '$RATE'" >&2; exit 2; }
[[ $DURATION =~ $positive ]] && (($(echo "$DURATION > 0" | bc))) || { echo "SECONDS: must be a positive number, not '$DURATION'" >&2; exit 2; }
[[ $CLIENTS =~ ^[1-9][0-9]*$ ]] || { echo "CLIENTS: must be an integer >= 1, not '$CLIENTS'" >&2; exit 2; }
[ -r "$PODS" ] && [ -r "$NODES" ] || { echo "TRACE_DIR: no alibaba-gpu-v2023 pod and node lists in '$TRACES'" >&2; exit 2; }
TOTAL=$(echo "$RATE * $DURATION / 1" | bc)
ROWS=$(($(wc -l <"$PODS") - 1))
PER_CLIENT=$(((TOTAL + CLIENTS - 1) / CLIENTS))
if ((PER_CLIENT > ROWS)); then
  echo "CLIENTS: $TOTAL jobs need at least $(((TOTAL + ROWS - 1) / ROWS)) clients (at most $ROWS each)" >&2
  exit 2
fi
source "$(dirname "$0")/lib/dev-server.sh"
dev_server "$BUILD" "$NODES"
AUTH="Authorization: Bearer $TESSERA_TOKEN"
# The sum of the samples of metric $1 (a name, or a name and labels as a regular expression).
metric() {
  curl -s "$TESSERA_SERVER/metrics" | grep -E "^$1[ {]" | awk '{s += $NF} END {printf "%d", s}'
}
echo "rate=$RATE/s seconds=$DURATION clients=$CLIENTS jobs=$TOTAL; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
start=$(date +%s.%N)
REPLAYS=()
for ((k = 0; k < CLIENTS; k++)); do
  rows=$((TOTAL / CLIENTS + (k < TOTAL % CLIENTS ? 1 : 0)))
  ((rows > 0)) || continue
  ln -s "$PODS" "$DATA/latency-$k.csv"
  "$BUILD/bin/tessera" replay --pods "$DATA/latency-$k.csv" --cluster sim --speedup 1e9 \
    --rate "$(echo "scale=6; $RATE / $CLIENTS" | bc)" --limit "$rows" >"$DATA/replay-$k.log" 2>&1 &
  REPLAYS+=($!)
done
for pid in "${REPLAYS[@]}"; do wait "$pid" || echo "a replay exited with status $?" >&2; done
answered=$(date +%s.%N)
submitted=$(for f in "$DATA"/replay-*.log; do grep -o '[0-9]* submitted' "$f" | tail -n 1; done | awk '{s += $1} END {print s}')
deadline=$(echo "$answered + $WAIT" | bc)
while (($(metric tessera_job_placement_latency_seconds_count) < submitted)) &&
      (($(echo "$(date +%s.%N) < $deadline" | bc))); do
  sleep 0.1
done
echo "submitted=$submitted in $(echo "$answered - $start" | bc)s (clients' wall); load after: $(cut -d' ' -f1-3 /proc/loadavg)"
grep -h '^replayed' "$DATA"/replay-*.log | sed -E 's/^replayed [^:]*: /  client: /'
grep -h '^refused\|^ ' "$DATA"/replay-*.log || true
sleep 1  # a placement is visible at once, its event once stored

# Every job's events, one request each over one kept-alive connection.
token=""
: >"$DATA/ids"
while :; do
  page=$(curl -sf -H "$AUTH" "$TESSERA_SERVER/api/v1/jobs?limit=1000${token:+&pageToken=$token}")
  jq -r '.items[].metadata.id' <<<"$page" >>"$DATA/ids"
  token=$(jq -r '.nextPageToken // ""' <<<"$page")
  [ -n "$token" ] || break
done
sed "s|.*|url = \"$TESSERA_SERVER/api/v1/jobs/&/events\"|" "$DATA/ids" >"$DATA/urls"
curl -s -H "$AUTH" -K "$DATA/urls" >"$DATA/events.json"
jq -n -r --arg rate "$RATE" '
  def seconds: capture("^(?<s>[^.Z]+)(?<f>[.][0-9]+)?Z$")
               | ((.s + "Z") | fromdateiso8601) + (("0" + (.f // ".0")) | tonumber);
  def first_time($type): [.[] | select(.type == $type) | .time | seconds] | first;
  def ms: . * 1000 * 1000 | round / 1000;
  def rank($q): .[((length * $q) | ceil) - 1];
  def summary($name): sort | "\($name): p50 \(rank(0.5) | ms) ms, p95 \(rank(0.95) | ms) ms, " +
    "p99 \(rank(0.99) | ms) ms, max \(last | ms) ms (\(length) jobs)";
  [inputs | .items | {submitted: first_time("Submitted"), placed: first_time("Placed"),
                      running: first_time("Running")}] as $jobs
  | ($jobs | map(.submitted) | sort) as $arrivals
  | "achieved: \(($arrivals | length) - 1) / \(($arrivals | last) - ($arrivals | first) | . * 1000 | round / 1000)s = " +
    "\((($arrivals | length) - 1) / (($arrivals | last) - ($arrivals | first)) | round) jobs/s (aim \($rate))",
    ($jobs | map(select(.placed != null) | .placed - .submitted) | summary("submit→placed (exact, per job)")),
    ($jobs | map(select(.running != null) | .running - .submitted) | summary("submit→running (exact, per job)")),
    "not placed: \($jobs | map(select(.placed == null)) | length)"
' "$DATA/events.json"
# The histogram's estimate, as Prometheus' histogram_quantile interpolates within a bucket.
curl -s "$TESSERA_SERVER/metrics" | grep -E '^tessera_job_placement_latency_seconds_bucket' |
  sed -E 's/.*le="([^"]+)"\} ([0-9.e+]+).*/\1 \2/' | awk '
  { le[NR] = $1; n[NR] = $2 }
  function quantile(q,    rank, i, lower, below) {
    rank = q * n[NR]; lower = 0; below = 0
    for (i = 1; i <= NR; ++i) {
      if (n[i] >= rank) {
        if (le[i] == "+Inf") return lower
        return lower + (le[i] - lower) * (n[i] > below ? (rank - below) / (n[i] - below) : 0)
      }
      lower = le[i]; below = n[i]
    }
  }
  END {
    printf "submit→placed (histogram estimate): p50 %.1f ms, p95 %.1f ms, p99 %.1f ms (%d jobs); share <= 50 ms: %.2f%%\n",
      quantile(0.5) * 1000, quantile(0.95) * 1000, quantile(0.99) * 1000, n[NR],
      100 * n50 / n[NR]
  }
  $1 != "+Inf" && $1 + 0 == 0.05 { n50 = $2 }'
curl -s "$TESSERA_SERVER/metrics" | grep -E '^tessera_scheduling_cycle_seconds_(sum|count)'
