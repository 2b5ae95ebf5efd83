#!/usr/bin/env bash
# Stop the single-host Slurm cluster started by start-slurm.sh.
#
# Usage: stop-slurm.sh [--purge]
#   --purge  also delete the state dir (configs, logs, job output)
#
# Uses the same TESSERA_SLURM_INSTANCE / TESSERA_SLURM_DIR as start-slurm.sh. Only
# processes recorded in that state dir's pid files are signalled, after
# checking that each pid still runs the expected binary for this state dir.
# Jobs are cancelled first (through slurmctld). Only if job steps outlive
# that (e.g. slurmctld had crashed) are slurmstepd processes holding files in
# this state dir, and their job processes, killed.
set -euo pipefail

log() { printf '[stop-slurm] %s\n' "$*" >&2; }

PURGE=0
for a in "$@"; do
  case "$a" in
    --purge) PURGE=1 ;;
    -h|--help) sed -n '2,12p' "${BASH_SOURCE[0]}" >&2; exit 0 ;;
    *) log "unknown argument: $a"; exit 2 ;;
  esac
done

INSTANCE="${TESSERA_SLURM_INSTANCE:-0}"
if [[ "$INSTANCE" == 0 ]]; then def_dir=/tmp/tessera-slurm; else def_dir="/tmp/tessera-slurm-$INSTANCE"; fi
DIR="${TESSERA_SLURM_DIR:-$def_dir}"
DIR="${DIR%/}"
MARKER="$DIR/.tessera-slurm-state"

if [[ ! -d "$DIR" ]]; then
  log "nothing to stop ($DIR does not exist)"
  exit 0
fi
if [[ ! -f "$MARKER" ]]; then
  log "$DIR was not created by start-slurm.sh; not touching it"
  exit 1
fi

export SLURM_CONF="$DIR/etc/slurm.conf"
unset SLURM_JWT

# pid from a pid file if alive, running the expected binary, with this state
# dir on its command line.
live_pid() {  # pidfile exe-prefix
  local f="$1" want="$2" pid exe
  [[ -s "$f" ]] || return 1
  pid="$(tr -dc '0-9' < "$f")"
  [[ -n "$pid" && -d "/proc/$pid" ]] || return 1
  exe="$(readlink "/proc/$pid/exe" 2>/dev/null)" || return 1
  [[ "$(basename "$exe")" == "$want"* ]] || return 1
  tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$DIR/" || return 1
  echo "$pid"
}

# Signal a group of processes, wait until all are gone (zombies count as
# gone), SIGKILL whatever is left after 10 s.
stop_pids() {  # name:pid...
  local e pid i left
  for e in "$@"; do kill -TERM "${e##*:}" 2>/dev/null || true; done
  for ((i = 0; i < 100; i++)); do
    left=()
    for e in "$@"; do
      pid="${e##*:}"
      [[ -d "/proc/$pid" ]] || continue
      [[ "$(awk '/^State:/{print $2}' "/proc/$pid/status" 2>/dev/null)" == Z ]] && continue
      left+=("$e")
    done
    (( ${#left[@]} == 0 )) && break
    sleep 0.1
  done
  for e in "${left[@]}"; do
    log "${e%%:*} (pid ${e##*:}) ignored SIGTERM for 10 s; sending SIGKILL"
    kill -KILL "${e##*:}" 2>/dev/null || true
  done
  for e in "$@"; do log "stopped ${e%%:*} (pid ${e##*:})"; done
}

stop_files() {  # exe-prefix pidfile...
  local want="$1" f pid targets=()
  shift
  for f in "$@"; do
    [[ -e "$f" ]] || continue
    if pid="$(live_pid "$f" "$want")"; then targets+=("$(basename "$f" .pid):$pid"); fi
  done
  (( ${#targets[@]} == 0 )) || stop_pids "${targets[@]}"
  rm -f "$@"
}

# 1. Cancel jobs while slurmctld is still up, and wait for them to finish.
if live_pid "$DIR/run/slurmctld.pid" slurmctld >/dev/null; then
  jobs="$(squeue -h -o '%A' 2>/dev/null | tr '\n' ' ' || true)"
  if [[ -n "${jobs// /}" ]]; then
    log "cancelling jobs: $jobs"
    # shellcheck disable=SC2086
    scancel $jobs 2>/dev/null || true
    for ((i = 0; i < 100; i++)); do
      active="$(squeue -h -t running,completing,configuring,suspended -o '%A' 2>/dev/null | wc -l || echo 0)"
      (( active == 0 )) && break
      sleep 0.2
    done
  fi
fi

# 2. Daemons, front to back.
stop_files slurmrestd "$DIR/run/slurmrestd.pid"
stop_files slurmd "$DIR"/run/slurmd-*.pid
stop_files slurmctld "$DIR/run/slurmctld.pid"
stop_files munged "$DIR/munge/run/munged.pid"

# 3. Job steps of this instance that outlived slurmctld/slurmd (only after a
# crash or a failed cancel): slurmstepd processes whose working directory or
# open files lie in this state dir, and the job processes below them.
# slurmstepd ignores SIGTERM, so it gets SIGKILL after its tasks are gone.
steps=()
stepd_bin="$(readlink -f /usr/sbin/slurmstepd 2>/dev/null || true)"
if [[ -n "$stepd_bin" ]]; then
  for p in /proc/[0-9]*; do
    [[ "$p/exe" -ef "$stepd_bin" ]] || continue
    ours=0
    [[ "$(readlink "$p/cwd" 2>/dev/null)/" == "$DIR"/* ]] && ours=1
    for fd in "$p"/fd/*; do
      (( ours )) && break
      [[ "$(readlink "$fd" 2>/dev/null)" == "$DIR"/* ]] && ours=1
    done
    (( ours )) && steps+=("${p#/proc/}")
  done
fi
if (( ${#steps[@]} )); then
  # Descendants of those slurmstepd processes (breadth first).
  declare -A ppid_of=()
  for p in /proc/[0-9]*; do
    while read -r k v; do
      [[ "$k" == PPid: ]] && { ppid_of[${p#/proc/}]="$v"; break; }
    done < "$p/status" 2>/dev/null || true
  done
  tree=("${steps[@]}")
  for ((k = 0; k < ${#tree[@]}; k++)); do
    for c in "${!ppid_of[@]}"; do
      [[ "${ppid_of[$c]}" == "${tree[$k]}" ]] && tree+=("$c")
    done
  done
  tasks=("${tree[@]:${#steps[@]}}")
  log "leftover job steps: slurmstepd ${steps[*]}; tasks: ${tasks[*]:-none}"
  for t in "${tasks[@]}"; do kill -TERM "$t" 2>/dev/null || true; done
  sleep 1
  for t in "${tasks[@]}" "${steps[@]}"; do kill -KILL "$t" 2>/dev/null || true; done
fi

if (( PURGE )); then
  rm -rf "$DIR"
  log "removed $DIR"
fi
log "done"
