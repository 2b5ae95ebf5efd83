#!/usr/bin/env bash
# Installs every Debian package Tessera needs to build, test, benchmark and fuzz.
# Idempotent: packages already present are skipped; safe to run on every build.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config
  clang clang-format clang-tidy libclang-rt-14-dev   # libFuzzer + sanitizer runtimes
  libabsl-dev libyaml-cpp-dev nlohmann-json3-dev libcli11-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev libsqlite3-dev
  libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc   # gRPC API
  libcpp-httplib-dev libssl-dev prometheus-cpp-dev   # REST API, CLI client, token hashes, metrics
  libboost-dev                                       # Beast + Asio: the REST server's HTTP front end
  zlib1g-dev                                         # gzip-compressed traces (SWF)
  libglpk-dev                                        # the simulator's packing bound (an LP)
  curl                                               # make run: waits for the server
  bc jq                                              # scripts/bench-latency.sh: rates, events
  ccache                                             # rebuilds in another clone reuse objects
  etcd-server                                        # the etcd store backend's tests (a real etcd)
  openssl                                            # certificates for the etcd TLS tests
)

missing=()
for pkg in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
