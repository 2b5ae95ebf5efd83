#!/usr/bin/env bash
# Start a real single-host Slurm 22.05 cluster (Debian packages) with several
# virtual compute nodes, fake GPUs and slurmrestd with JWT auth, all bound to
# 127.0.0.1: what the Slurm backend's integration test (agent_slurm_test) runs
# against, and a way to try `tessera agent --backend slurm` on one machine
# (docs/agents/slurm.md). Idempotent: a healthy instance started with the same
# settings is reused; anything else is stopped and started afresh. Installs the
# missing Debian packages (munge slurmctld slurmd slurmrestd slurm-client
# slurm-wlm-jwt-plugin curl) itself. slurmctld logs each job's end to
# $SLURM_JOBCOMP_FILE (jobcomp/filetxt), which `tessera agent --slurm-jobcomp-file`
# follows. Run as root.
#
# Usage: start-slurm.sh [NODES] [GPUS_PER_NODE] [--fresh]
#   NODES          number of virtual compute nodes (default 4, 1..64)
#   GPUS_PER_NODE  fake GPUs per node (default 8, 0..64; 0 = no GRES)
#   --fresh        always restart with empty state, even if a matching
#                  instance is already running
#
# Environment (all optional):
#   TESSERA_SLURM_INSTANCE        0..9; shifts default ports/dir/cluster name so that
#                                 several independent clusters can run side by side
#   TESSERA_SLURM_DIR             state dir (default /tmp/tessera-slurm, or
#                                 /tmp/tessera-slurm-<instance> for instance > 0)
#   TESSERA_SLURM_CLUSTER         cluster name (default tessera<instance>)
#   TESSERA_SLURM_CTLD_PORT       slurmctld port   (default 26817 + 200*instance)
#   TESSERA_SLURM_REST_PORT       slurmrestd port  (default 26820 + 200*instance)
#   TESSERA_SLURM_NODE_PORT_BASE  first slurmd port (default 26900 + 200*instance)
#   TESSERA_SLURM_NODE_PREFIX     node name prefix (default node -> node1..nodeN)
#   TESSERA_SLURM_PARTITION       partition name (default gpu)
#   TESSERA_SLURM_CPUS            CPUs per node (default 8)
#   TESSERA_SLURM_MEM_MB          RealMemory per node in MB (default 65536)
#   TESSERA_SLURM_GPU_TYPE        GRES type (default h100)
#   TESSERA_SLURM_USER            user the printed token is for (default root; a
#                                 root token may act as any user via the
#                                 X-SLURM-USER-NAME header)
#   TESSERA_SLURM_TOKEN_LIFESPAN  token lifetime in seconds (default 86400)
#   TESSERA_SLURM_TIMEOUT         seconds to wait for each readiness step (default 60)
#
# Stdout carries only `export NAME=value` lines, so use it as:
#   eval "$(path/to/start-slurm.sh 4 8)"
# Progress and errors go to stderr.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

log() { printf '[start-slurm] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# ---------------------------------------------------------------- arguments
NODES=4
GPUS=8
FRESH=0
pos=0
for a in "$@"; do
  case "$a" in
    --fresh) FRESH=1 ;;
    -h|--help) sed -n '2,41p' "${BASH_SOURCE[0]}" >&2; exit 0 ;;
    -*) die "unknown option: $a" ;;
    *)
      pos=$((pos + 1))
      case $pos in
        1) NODES="$a" ;;
        2) GPUS="$a" ;;
        *) die "too many arguments" ;;
      esac ;;
  esac
done
{ [[ "$NODES" =~ ^[0-9]+$ ]] && (( NODES >= 1 && NODES <= 64 )); } || die "NODES must be 1..64 (got '$NODES')"
{ [[ "$GPUS" =~ ^[0-9]+$ ]] && (( GPUS <= 64 )); } || die "GPUS_PER_NODE must be 0..64 (got '$GPUS')"

INSTANCE="${TESSERA_SLURM_INSTANCE:-0}"
[[ "$INSTANCE" =~ ^[0-9]$ ]] || die "TESSERA_SLURM_INSTANCE must be 0..9"
if (( INSTANCE == 0 )); then def_dir=/tmp/tessera-slurm; else def_dir="/tmp/tessera-slurm-$INSTANCE"; fi
DIR="${TESSERA_SLURM_DIR:-$def_dir}"
CLUSTER="${TESSERA_SLURM_CLUSTER:-tessera$INSTANCE}"
CTLD_PORT="${TESSERA_SLURM_CTLD_PORT:-$((26817 + 200 * INSTANCE))}"
REST_PORT="${TESSERA_SLURM_REST_PORT:-$((26820 + 200 * INSTANCE))}"
NODE_PORT_BASE="${TESSERA_SLURM_NODE_PORT_BASE:-$((26900 + 200 * INSTANCE))}"
PREFIX="${TESSERA_SLURM_NODE_PREFIX:-node}"
PARTITION="${TESSERA_SLURM_PARTITION:-gpu}"
CPUS="${TESSERA_SLURM_CPUS:-8}"
MEM_MB="${TESSERA_SLURM_MEM_MB:-65536}"
GPU_TYPE="${TESSERA_SLURM_GPU_TYPE:-h100}"
TOKEN_USER="${TESSERA_SLURM_USER:-root}"
LIFESPAN="${TESSERA_SLURM_TOKEN_LIFESPAN:-86400}"
TIMEOUT="${TESSERA_SLURM_TIMEOUT:-60}"
API=v0.0.38

[[ "$DIR" = /* ]] || die "TESSERA_SLURM_DIR must be an absolute path"
DIR="${DIR%/}"
# The munge socket path must fit in sockaddr_un (108 bytes).
(( ${#DIR} <= 80 )) || die "TESSERA_SLURM_DIR is too long (max 80 characters)"
for v in CTLD_PORT REST_PORT NODE_PORT_BASE CPUS MEM_MB LIFESPAN TIMEOUT; do
  [[ "${!v}" =~ ^[0-9]+$ ]] || die "$v must be a number"
done
[[ "$CLUSTER" =~ ^[a-z0-9_-]+$ ]] || die "cluster name must be lowercase [a-z0-9_-]"
[[ "$PREFIX" =~ ^[a-z][a-z0-9-]*$ ]] || die "node prefix must match [a-z][a-z0-9-]*"
[[ "$GPU_TYPE" =~ ^[A-Za-z0-9_-]+$ ]] || die "GPU type must match [A-Za-z0-9_-]+"

CONF="$DIR/etc/slurm.conf"
MARKER="$DIR/.tessera-slurm-state"
PARAMS="nodes=$NODES gpus=$GPUS type=$GPU_TYPE cpus=$CPUS mem=$MEM_MB cluster=$CLUSTER ctld=$CTLD_PORT rest=$REST_PORT nodebase=$NODE_PORT_BASE prefix=$PREFIX partition=$PARTITION"
NODE_LAST_PORT=$((NODE_PORT_BASE + NODES - 1))
(( NODE_LAST_PORT < 65536 && REST_PORT < 65536 && CTLD_PORT < 65536 )) || die "port out of range"

export SLURM_CONF="$CONF"
# A token in the caller's environment (e.g. from an earlier instance) would
# switch the Slurm CLI used below to JWT auth.
unset SLURM_JWT

# ----------------------------------------------------------------- packages
PKGS=(munge slurmctld slurmd slurmrestd slurm-client slurm-wlm-jwt-plugin curl)
install_packages() {
  local missing=() p
  for p in "${PKGS[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  (( ${#missing[@]} == 0 )) && return 0
  (( EUID == 0 )) || die "missing packages (${missing[*]}) and not root"
  log "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  local t0=$SECONDS
  if ! compgen -G '/var/lib/apt/lists/*_Packages' >/dev/null; then
    apt-get update -qq >&2 || die "apt-get update failed"
  fi
  if ! apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2; then
    apt-get update -qq >&2 || die "apt-get update failed"
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2 || die "apt-get install failed"
  fi
  log "packages installed in $((SECONDS - t0)) s"
}

# ------------------------------------------------------------------ helpers
# pid from a pid file if that process is alive and runs the expected binary
# with this instance's state dir on its command line.
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

# Run a command with only fds 0-2 inherited, so that no daemon keeps a pipe of
# the caller (e.g. a CI log or a $(...) capture) open.
run_clean() {
  (
    for fd in /proc/self/fd/*; do
      n="${fd##*/}"
      if (( n > 2 )); then eval "exec $n>&-" 2>/dev/null || true; fi
    done
    exec "$@"
  )
}

port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# True unless the pid file names a process that is gone (or a zombie).
pid_not_dead() {  # pidfile
  local pid
  [[ -s "$1" ]] || return 0
  pid="$(tr -dc '0-9' < "$1")"
  [[ -n "$pid" && -d "/proc/$pid" ]] || return 1
  [[ "$(awk '/^State:/{print $2}' "/proc/$pid/status" 2>/dev/null)" != Z ]]
}

# Poll a readiness check; give up early when a daemon whose pid file is in
# WATCH has died.
WATCH=()
wait_for() {  # command...
  local deadline=$((SECONDS + TIMEOUT)) w
  until "$@" >/dev/null 2>&1; do
    (( SECONDS < deadline )) || return 1
    for w in "${WATCH[@]}"; do
      if ! pid_not_dead "$w"; then
        log "$(basename "$w" .pid) exited"
        return 1
      fi
    done
    sleep 0.2
  done
}

node_names() {
  if (( NODES == 1 )); then echo "${PREFIX}1"; else echo "${PREFIX}[1-$NODES]"; fi
}

nodes_idle() {
  local n
  n="$(sinfo -h -N -p "$PARTITION" -o '%N %t' 2>/dev/null | awk '$2 == "idle"' | wc -l)"
  (( n == NODES ))
}

ctld_up() { scontrol ping 2>/dev/null | grep -q 'is UP'; }

new_token() {
  scontrol token username="$TOKEN_USER" lifespan="$LIFESPAN" | sed -n 's/^SLURM_JWT=//p'
}

rest_ping() {  # token
  curl -sf --max-time 5 -H "X-SLURM-USER-NAME: $TOKEN_USER" -H "X-SLURM-USER-TOKEN: $1" \
    "http://127.0.0.1:$REST_PORT/slurm/$API/ping" | grep -q '"ping": "UP"'
}

all_running() {
  live_pid "$DIR/munge/run/munged.pid" munged >/dev/null || return 1
  live_pid "$DIR/run/slurmctld.pid" slurmctld >/dev/null || return 1
  live_pid "$DIR/run/slurmrestd.pid" slurmrestd >/dev/null || return 1
  local i
  for ((i = 1; i <= NODES; i++)); do
    live_pid "$DIR/run/slurmd-$PREFIX$i.pid" slurmd >/dev/null || return 1
  done
}

print_exports() {  # token
  cat <<EOF
export SLURM_CONF=$CONF
export SLURM_REST_URL=http://127.0.0.1:$REST_PORT
export SLURM_REST_API_VERSION=$API
export SLURM_REST_USER=$TOKEN_USER
export SLURM_TEST_CLUSTER=$CLUSTER
export SLURM_TEST_PARTITION=$PARTITION
export SLURM_TEST_DIR=$DIR
export SLURM_JOBCOMP_FILE=$DIR/log/jobcomp.txt
export SLURM_JWT=$1
EOF
}

dump_logs() {
  local f
  for f in "$DIR"/log/*.log "$DIR"/munge/munged.log; do
    [[ -f "$f" ]] || continue
    log "---- tail of $f"
    tail -n 15 "$f" | grep -v -e 'pmix' -e 'MPI: Cannot create context' >&2 || true
  done
}

fail() {
  log "ERROR: $*"
  dump_logs
  log "stopping the partial instance"
  TESSERA_SLURM_DIR="$DIR" bash "$HERE/stop-slurm.sh" >&2 || true
  exit 1
}

# ------------------------------------------------------------------- main
(( EUID == 0 )) || die "must run as root (slurmd and SlurmUser=root need it)"
install_packages
[[ -f "$HERE/slurm.conf.in" && -f "$HERE/gres.conf.in" ]] || die "templates missing next to $0"

# Reuse a healthy instance with identical settings.
if (( FRESH == 0 )) && [[ -f "$MARKER" && -f "$DIR/params" ]] \
   && [[ "$(cat "$DIR/params")" == "$PARAMS" ]] && all_running && ctld_up; then
  tok="$(new_token || true)"
  if [[ -n "$tok" ]] && rest_ping "$tok"; then
    log "reusing running instance in $DIR ($PARAMS)"
    print_exports "$tok"
    exit 0
  fi
fi

# Anything left from an earlier start of this instance is stopped first.
if [[ -e "$DIR" ]]; then
  if [[ -f "$MARKER" ]]; then
    TESSERA_SLURM_DIR="$DIR" bash "$HERE/stop-slurm.sh" >&2 || die "could not stop the previous instance in $DIR"
    rm -rf "$DIR"
  elif [[ -n "$(ls -A "$DIR" 2>/dev/null)" ]]; then
    die "$DIR exists, is not empty and was not created by this script; refusing to touch it"
  fi
fi

for p in "$CTLD_PORT" "$REST_PORT" $(seq "$NODE_PORT_BASE" "$NODE_LAST_PORT"); do
  port_busy "$p" && die "port $p on 127.0.0.1 is already in use"
done

t_start=$SECONDS
log "state dir $DIR; $NODES node(s) x $CPUS CPUs, ${MEM_MB} MB, $GPUS x gpu:$GPU_TYPE; cluster $CLUSTER"
mkdir -p "$DIR"
: > "$MARKER"
echo "$PARAMS" > "$DIR/params"
mkdir -p "$DIR"/{etc,run,log,spool/ctld,jobs,dev} "$DIR/munge/key" "$DIR/munge/run"
chmod 755 "$DIR" "$DIR/etc" "$DIR/munge" "$DIR/munge/run"
chmod 700 "$DIR/munge/key"
# Job output may be written by any (impersonated) user.
chmod 1777 "$DIR/jobs"
for ((i = 1; i <= NODES; i++)); do mkdir -p "$DIR/spool/d/$PREFIX$i"; done

# Keys: munge (daemon auth) and HS256 JWT key (REST auth).
head -c 1024 /dev/urandom > "$DIR/munge/key/munge.key"
chmod 400 "$DIR/munge/key/munge.key"
head -c 32 /dev/urandom > "$DIR/etc/jwt_hs256.key"
chmod 600 "$DIR/etc/jwt_hs256.key"

# Fake GPU device files.
gres_line=""
node_gres=""
if (( GPUS > 0 )); then
  for ((g = 0; g < GPUS; g++)); do ln -sf /dev/null "$DIR/dev/nvidia$g"; done
  if (( GPUS == 1 )); then files="$DIR/dev/nvidia0"; else files="$DIR/dev/nvidia[0-$((GPUS - 1))]"; fi
  gres_line="NodeName=$(node_names) Name=gpu Type=$GPU_TYPE File=$files"
  node_gres="Gres=gpu:$GPU_TYPE:$GPUS"
fi
if (( NODES == 1 )); then node_ports="$NODE_PORT_BASE"; else node_ports="[$NODE_PORT_BASE-$NODE_LAST_PORT]"; fi

render() {  # template output
  sed -e "s|@STATE_DIR@|$DIR|g" -e "s|@CLUSTER@|$CLUSTER|g" -e "s|@CTLD_PORT@|$CTLD_PORT|g" \
      -e "s|@NODE_NAMES@|$(node_names)|g" -e "s|@NODE_PORTS@|$node_ports|g" \
      -e "s|@CPUS@|$CPUS|g" -e "s|@MEM_MB@|$MEM_MB|g" -e "s|@NODE_GRES@|$node_gres|g" \
      -e "s|@PARTITION@|$PARTITION|g" -e "s|@GRES_LINE@|$gres_line|g" "$1" > "$2"
  chmod 644 "$2"
}
render "$HERE/slurm.conf.in" "$CONF"
render "$HERE/gres.conf.in" "$DIR/etc/gres.conf"
# slurmd looks for plugstack.conf next to slurm.conf; keep it empty.
: > "$DIR/etc/plugstack.conf"
chmod 644 "$DIR/etc/plugstack.conf"

# munged (private instance: own key, socket, pid and log).
run_clean munged --key-file="$DIR/munge/key/munge.key" --socket="$DIR/munge/run/munge.sock" \
  --pid-file="$DIR/munge/run/munged.pid" --log-file="$DIR/munge/munged.log" \
  --seed-file="$DIR/munge/key/munged.seed" </dev/null >&2 || fail "munged did not start"
wait_for test -S "$DIR/munge/run/munge.sock" || fail "munge socket did not appear"

# slurmctld (daemonizes, writes its pid file).
run_clean slurmctld -f "$CONF" </dev/null >&2 || fail "slurmctld did not start"
WATCH+=("$DIR/run/slurmctld.pid")
wait_for ctld_up || fail "slurmctld did not answer ping within ${TIMEOUT}s"
log "slurmctld up after $((SECONDS - t_start)) s"

# One slurmd per virtual node (multiple-slurmd: -N picks the NodeName/Port).
for ((i = 1; i <= NODES; i++)); do
  run_clean slurmd -f "$CONF" -N "$PREFIX$i" </dev/null >&2 || fail "slurmd $PREFIX$i did not start"
  WATCH+=("$DIR/run/slurmd-$PREFIX$i.pid")
done
wait_for nodes_idle || fail "not all $NODES nodes became idle within ${TIMEOUT}s"
log "$NODES node(s) idle after $((SECONDS - t_start)) s"

# slurmrestd: runs in the foreground, refuses root, so it drops to nobody
# after binding. SLURM_JWT=daemon makes it use auth/jwt towards slurmctld.
# The bash wrapper records its own pid and then execs slurmrestd.
# shellcheck disable=SC2016
run_clean setsid bash -c 'echo $$ > "$1"; shift; exec "$@"' _ "$DIR/run/slurmrestd.pid" \
  env SLURM_JWT=daemon slurmrestd -f "$CONF" -u nobody -a rest_auth/jwt \
  -s openapi/v0.0.38,openapi/v0.0.37,openapi/v0.0.36 "127.0.0.1:$REST_PORT" \
  </dev/null >>"$DIR/log/slurmrestd.log" 2>&1 &
WATCH+=("$DIR/run/slurmrestd.pid")
tok="$(new_token)" || fail "scontrol token failed"
[[ -n "$tok" ]] || fail "empty token"
wait_for rest_ping "$tok" || fail "slurmrestd did not answer ping within ${TIMEOUT}s"
live_pid "$DIR/run/slurmrestd.pid" slurmrestd >/dev/null || fail "slurmrestd pid file does not match"
log "cluster $CLUSTER ready in $((SECONDS - t_start)) s; REST at http://127.0.0.1:$REST_PORT/slurm/$API/"
print_exports "$tok"
