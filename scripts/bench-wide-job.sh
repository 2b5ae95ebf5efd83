#!/usr/bin/env bash
# One wide job through a live control plane: starts `tessera server --dev` with the Alibaba
# trace's nodes as the simulated cluster, submits one job of REPLICAS tasks (default 4,096, the
# most a job may have; 100m CPU and 64Mi each, every task "runs" 1 s) and prints the seconds
# from its submission to its Succeeded, the server's CPU time meanwhile (user + system) and its
# peak resident memory. Every task's placement, launch, start and end is a
# durable step of the job, so the time shows what each step costs as the job widens.
#
#   scripts/bench-wide-job.sh BUILD_DIR TRACE_DIR [REPLICAS]
set -euo pipefail
BUILD=${1:?build directory}
TRACES=${2:?trace directory}
REPLICAS=${3:-4096}
source "$(dirname "$0")/lib/dev-server.sh"
cat >"$DATA/job.yaml" <<YAML
apiVersion: tessera/v1
kind: Job
metadata: {name: wide}
spec:
  duration: 1s
  tolerations: [{key: tessera.io/simulated, value: "true", effect: NoSchedule}]
  tasks:
    - name: worker
      replicas: $REPLICAS
      resources: {cpu: 100m, memory: 64Mi}
      command: ["true"]
YAML
dev_server "$BUILD" "$TRACES/alibaba-gpu-v2023/openb_node_list_gpu_node.csv"
# The server's CPU time so far (user + system), in clock ticks.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$SERVER/stat"; }
cpu_before=$(cpu_ticks)
start=$(date +%s%N)
id=$("$BUILD/bin/tessera" submit -q -f "$DATA/job.yaml")
"$BUILD/bin/tessera" get "$id" --watch >/dev/null  # returns once the job has ended
end=$(date +%s%N)
phase=$("$BUILD/bin/tessera" get "$id" | awk 'NR == 2 {print $5}')
cpu_ms=$((($(cpu_ticks) - cpu_before) * 1000 / $(getconf CLK_TCK)))
peak=$(awk '/^VmHWM/ {print int($2 / 1024)}' "/proc/$SERVER/status")
echo "job $id ($REPLICAS tasks): $phase after $(((end - start) / 1000000)) ms; server CPU $cpu_ms ms; server peak RSS $peak MiB"
