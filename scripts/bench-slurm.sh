#!/usr/bin/env bash
# Slurm alone, Tessera alone, and Tessera in front of Slurm, side by side: starts the real
# single-host Slurm of scripts/slurm/start-slurm.sh (4 nodes x 8 CPUs), `tessera server --dev`
# (this machine as cluster "local") and `tessera agent --backend slurm` (the Slurm as cluster
# "slurm-bench"), then runs ROUNDS rounds of three paths, in turn:
#   slurm    JOBS batch jobs POSTed to slurmrestd's /slurm/v0.0.38/job/submit
#   local    JOBS Tessera jobs POSTed to /api/v1/jobs for cluster "local"
#   tessera  JOBS Tessera jobs POSTed to /api/v1/jobs for cluster "slurm-bench" (through the agent)
# Every job is /bin/true asking 1 CPU and 100 MiB, submitted from THREADS threads (default 4),
# each over one kept-alive connection, as fast as the answers come.
#
# Per round and path: submissions/s (first request to last answer), end-to-end jobs/s (first
# request to the last job's end: Slurm's own counters, `sdiag`, for the slurm path; Tessera's
# /metrics, tessera_jobs_finished_total, for the others; both read every 50 ms) and the CPU
# time per job of slurmrestd, slurmctld, the tessera server and the agent (utime + stime from
# /proc over the round). Then the medians over the rounds, as a Markdown table. Slurm keeps
# finished jobs for MinJobAge (300 s): later rounds run beside the earlier rounds' jobs.
#
#   scripts/bench-slurm.sh BUILD_DIR [JOBS] [ROUNDS]     (defaults 1000 3)
# The agent follows Slurm's job-completion log (--slurm-jobcomp-file) unless NOTICES=0, which
# leaves it to its polls alone; slurmctld writes that log in every case (jobcomp/filetxt).
# Run as root (Slurm's daemons). Environment: TESSERA_SLURM_INSTANCE (default 8), THREADS,
# NOTICES (default 1).
set -euo pipefail
BUILD=${1:?build directory}
JOBS=${2:-1000}
ROUNDS=${3:-3}
THREADS=${THREADS:-4}
NOTICES=${NOTICES:-1}
export TESSERA_SLURM_INSTANCE=${TESSERA_SLURM_INSTANCE:-8}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TESSERA="$BUILD/bin/tessera"
DATA=$(mktemp -d)
HTTP_PORT=$((20000 + RANDOM % 20000))
GRPC_PORT=$((HTTP_PORT + 1))
SERVER=""
AGENT=""
stop() {  # under set -e: every step may fail without skipping the next
  if [[ -n "$AGENT" ]]; then kill "$AGENT" 2>/dev/null || true; wait "$AGENT" 2>/dev/null || true; fi
  if [[ -n "$SERVER" ]]; then kill "$SERVER" 2>/dev/null || true; wait "$SERVER" 2>/dev/null || true; fi
  bash "$HERE/slurm/stop-slurm.sh" --purge >/dev/null 2>&1 || true
  rm -rf "$DATA"
}
trap stop EXIT

eval "$(bash "$HERE/slurm/start-slurm.sh" 4 8 --fresh)"
NOTICE_FLAGS=()
if [[ "$NOTICES" == 1 ]]; then NOTICE_FLAGS=(--slurm-jobcomp-file "$SLURM_JOBCOMP_FILE"); fi
"$TESSERA" server --dev --data-dir "$DATA" --http-addr "127.0.0.1:$HTTP_PORT" \
  --grpc-addr "127.0.0.1:$GRPC_PORT" --rate-limit 0 >"$DATA/server.log" 2>&1 &
SERVER=$!
until curl -sf "http://127.0.0.1:$HTTP_PORT/readyz" >/dev/null; do sleep 0.2; done
"$TESSERA" agent --server "127.0.0.1:$GRPC_PORT" --cluster slurm-bench --backend slurm \
  --token-file "$DATA/admin.token" --slurm-partition "$SLURM_TEST_PARTITION" \
  --slurm-log-dir "$SLURM_TEST_DIR/jobs" "${NOTICE_FLAGS[@]}" >"$DATA/agent.log" 2>&1 &
AGENT=$!
TOKEN=$(cat "$DATA/admin.token")
until curl -sf -H "Authorization: Bearer $TOKEN" "http://127.0.0.1:$HTTP_PORT/api/v1/nodes" |
      grep -q '"slurm-bench"'; do
  kill -0 "$AGENT" || { cat "$DATA/agent.log" >&2; exit 1; }
  sleep 0.2
done

python3 - "$JOBS" "$ROUNDS" "$THREADS" "$HTTP_PORT" "$TOKEN" "$SERVER" "$AGENT" <<'EOF'
import http.client, json, os, re, statistics, subprocess, sys, threading, time

jobs, rounds, threads, port, token = (int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]),
                                      int(sys.argv[4]), sys.argv[5])
slurm_dir = os.environ["SLURM_TEST_DIR"]
pids = {"slurmrestd": open(f"{slurm_dir}/run/slurmrestd.pid").read().split()[0],
        "slurmctld": open(f"{slurm_dir}/run/slurmctld.pid").read().split()[0],
        "server": sys.argv[6], "agent": sys.argv[7]}
rest_host, rest_port = os.environ["SLURM_REST_URL"].split("//")[1].split(":")
slurm_headers = {"X-SLURM-USER-NAME": os.environ["SLURM_REST_USER"],
                 "X-SLURM-USER-TOKEN": os.environ["SLURM_JWT"],
                 "Content-Type": "application/json"}
tessera_headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
slurm_job = json.dumps({"script": "#!/bin/sh\nexec /bin/true\n",
                        "job": {"name": "bench", "partition": os.environ["SLURM_TEST_PARTITION"],
                                "cpus_per_task": 1, "memory_per_node": 100,
                                "current_working_directory": "/tmp",
                                "standard_output": "/dev/null", "standard_error": "/dev/null",
                                "environment": {"PATH": "/usr/bin:/bin"}}})

def tessera_job(cluster, name):
    return json.dumps({"apiVersion": "tessera/v1", "kind": "Job", "metadata": {"name": name},
                       "spec": {"clusterSelector": {"tessera.io/cluster": cluster},
                                "tasks": [{"name": "w", "command": ["/bin/true"],
                                           "resources": {"cpu": "1", "memory": "100Mi"}}]}})

def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

def slurm_ended():  # Slurm's own counters: jobs that reached an end since slurmctld started
    out = subprocess.run(["env", "-u", "SLURM_JWT", "sdiag"], capture_output=True, text=True).stdout
    return sum(int(n) for n in re.findall(r"^\s*Jobs (?:completed|canceled|failed):\s+(\d+)", out, re.M))

def tessera_ended():
    c = http.client.HTTPConnection("127.0.0.1", port)
    c.request("GET", "/metrics")
    text = c.getresponse().read().decode()
    return sum(float(v) for v in re.findall(r'^tessera_jobs_finished_total\{[^}]*\} (\S+)', text, re.M))

def submit(host, port_, path, headers, bodies, out, errors):
    c = http.client.HTTPConnection(host, port_)
    for body in bodies:
        c.request("POST", path, body, headers)
        r = c.getresponse()
        data = r.read()
        if r.status not in (200, 201):
            errors.append(f"HTTP {r.status}: {data[:200]!r}")
    out.append(time.monotonic())

def run(path, round_):
    if path == "slurm":
        target = (rest_host, int(rest_port), "/slurm/v0.0.38/job/submit", slurm_headers)
        bodies = [slurm_job] * jobs
        ended = slurm_ended
    else:
        cluster = "local" if path == "local" else "slurm-bench"
        target = ("127.0.0.1", port, "/api/v1/jobs", tessera_headers)
        bodies = [tessera_job(cluster, f"{path}-{round_}-{i}") for i in range(jobs)]
        ended = tessera_ended
    before_ended = ended()
    before_cpu = {name: cpu_seconds(pid) for name, pid in pids.items()}
    done, errors = [], []
    start = time.monotonic()
    workers = [threading.Thread(target=submit, args=(*target, bodies[k::threads], done, errors))
               for k in range(threads)]
    for w in workers: w.start()
    for w in workers: w.join()
    submitted = max(done)
    while ended() - before_ended < jobs and time.monotonic() - start < 900:
        time.sleep(0.05)
    end = time.monotonic()
    finished = ended() - before_ended
    cpu = {name: (cpu_seconds(pid) - before_cpu[name]) * 1000 / jobs for name, pid in pids.items()}
    result = {"path": path, "submit": jobs / (submitted - start), "e2e": finished / (end - start),
              "finished": finished, "errors": len(errors), **cpu}
    print(f"round {round_} {path:8s} submit {result['submit']:7.1f}/s  end to end "
          f"{result['e2e']:6.1f} jobs/s ({int(finished)} ended in {end - start:.1f} s, "
          f"{len(errors)} refused)  CPU ms/job: " +
          " ".join(f"{n} {cpu[n]:.2f}" for n in pids), flush=True)
    if errors: print("  first refusal:", errors[0], flush=True)
    return result

results = []
for r in range(1, rounds + 1):
    for path in ("slurm", "local", "tessera"):
        results.append(run(path, r))
        time.sleep(2)
names = {"slurm": "Slurm alone (slurmrestd `job/submit`)", "local": "Tessera, its local cluster",
         "tessera": "Tessera in front of Slurm (`tessera agent --backend slurm`)"}
print(f"\n{jobs} jobs x {rounds} rounds, {threads} threads; medians:\n")
print("| path | submissions/s | end to end, jobs/s | CPU per job (ms): slurmrestd, slurmctld, "
      "tessera server, agent |")
print("|---|---|---|---|")
for path in ("slurm", "local", "tessera"):
    rows = [x for x in results if x["path"] == path]
    med = lambda key: statistics.median(x[key] for x in rows)
    print(f"| {names[path]} | {med('submit'):.0f} | {med('e2e'):.1f} | "
          f"{med('slurmrestd'):.2f}, {med('slurmctld'):.2f}, {med('server'):.2f}, "
          f"{med('agent'):.2f} |")
ratio = (statistics.median(x["e2e"] for x in results if x["path"] == "tessera") /
         statistics.median(x["e2e"] for x in results if x["path"] == "slurm"))
print(f"\nTessera in front of Slurm / Slurm alone, end to end: {ratio:.2f}x")
EOF
