#!/usr/bin/env bash
# Downloads the public cluster traces Tessera's simulator and tests read, from their original
# repositories at pinned commits, and checks every file against its recorded sha256.
#
#   scripts/fetch-traces.sh [--dir DIR | DIR] [--set NAME]... [--list]
#
#   --dir DIR   where to put them (default: ./traces, which git ignores); a bare DIR argument
#               means the same. Point the tests at it with TESSERA_TRACE_DIR=DIR.
#   --set NAME  a trace set to fetch (repeatable; default: alibaba-gpu-v2023). --set all fetches
#               every set listed by --list.
#   --list      prints the sets and exits.
#
# TESSERA_TRACE_MIRROR=URL replaces https://raw.githubusercontent.com (a mirror laid out as
# OWNER/REPO/COMMIT/PATH).
#
# Files already present with the right checksum are kept. A file is written only after its
# checksum matched (it is downloaded to DIR/.partial first). Exit status: 0 when every file of
# the chosen sets is in place and verified; 1 on a network failure (with the URL) or a checksum
# mismatch (both sums shown; the bad download is removed); 2 on bad arguments.
#
# Needs curl and sha256sum. The sources, licenses and schemas are described in
# docs/simulator.md ("Traces"); the data is research/study use with attribution (Alibaba) or
# CC BY 4.0, never committed to this repository.
set -euo pipefail

RAW="${TESSERA_TRACE_MIRROR:-https://raw.githubusercontent.com}"
CLUSTERDATA="alibaba/clusterdata/7a6c496e4f4b6ce6150be8f881cb051bf2abff42"
FGD_ARTIFACT="hkust-adsl/kubernetes-scheduler-simulator/8f3d6417353c5083c6d56617f255fadd8dc306bc"
CONNECT_TIMEOUT=15
MAX_TIME=300

# Each set: lines of "target-path  sha256  source (owner/repo/commit/path)". A sha256 of "-"
# means the source publishes none: the file is kept and its sum printed for the record.
set_alibaba_gpu_v2023() {
  local c="${CLUSTERDATA}/cluster-trace-gpu-v2023"
  cat <<EOF
alibaba-gpu-v2023/openb_node_list_all_node.csv 5a85c2af79c66a1efff8bbcbda430400aae56d8431370d738480967e1a9c6b15 ${c}/csv/openb_node_list_all_node.csv
alibaba-gpu-v2023/openb_node_list_gpu_node.csv 2beca64b4d3dfa342036a34b56a495c6cef9225db836c81f541282cb1df320b5 ${c}/csv/openb_node_list_gpu_node.csv
alibaba-gpu-v2023/openb_pod_list_cpu0.csv 1bc3fd9ee5c1468ccd018f624d9222746e08d59f963f66b925804734271c0eaa ${c}/csv/openb_pod_list_cpu0.csv
alibaba-gpu-v2023/openb_pod_list_cpu037.csv 8ed554026d041b15ff21ddc104d9a21dbd9a93c496262fa23ef7b5be27e220dc ${c}/csv/openb_pod_list_cpu037.csv
alibaba-gpu-v2023/openb_pod_list_cpu050.csv 747f43247bffc2b0bb081d7f61f0705ca8d390dafc0b647e642c92f3baf3ba1e ${c}/csv/openb_pod_list_cpu050.csv
alibaba-gpu-v2023/openb_pod_list_cpu072.csv f8a2b031461b54d7b9f06d55473c2371eb3357b78a255c646bdca5e0833a8a2f ${c}/csv/openb_pod_list_cpu072.csv
alibaba-gpu-v2023/openb_pod_list_cpu100.csv bec1c33fbdde61fd463877534ec79b393aec73e1cbb22d55fab9f166ac480982 ${c}/csv/openb_pod_list_cpu100.csv
alibaba-gpu-v2023/openb_pod_list_cpu200.csv b7e9d8a1a601da84d6e0b4110b19ef5001be5e4796d33e7b82f166ba95161f87 ${c}/csv/openb_pod_list_cpu200.csv
alibaba-gpu-v2023/openb_pod_list_cpu235.csv 87bebd4d012faa8305ce1fd82737f51cf03361aac28b75d42e34aa656d7f4ee0 ${c}/csv/openb_pod_list_cpu235.csv
alibaba-gpu-v2023/openb_pod_list_cpu250.csv 134c21ff96d57533df8a37b67632972884fec9396e77cd0898ddc370cc8e607d ${c}/csv/openb_pod_list_cpu250.csv
alibaba-gpu-v2023/openb_pod_list_cpu300.csv 76528825f40ee662cb098b3b6e683c1efd9f87a0c8af7e628df1f32c639636d1 ${c}/csv/openb_pod_list_cpu300.csv
alibaba-gpu-v2023/openb_pod_list_default.csv 1ee7ed79c27a3b0861cda8ddba86a004c6aba904caafa329a76ae93ca63834a8 ${c}/csv/openb_pod_list_default.csv
alibaba-gpu-v2023/openb_pod_list_gpushare100.csv 12dbc07d6a49bf8641e2275a2ff5bf7be74b5df7d148d531e135b140b95f9a3d ${c}/csv/openb_pod_list_gpushare100.csv
alibaba-gpu-v2023/openb_pod_list_gpushare20.csv 9be2d0efb52e242c32e23dd184cc5fcc1983478c6c9c02cbb6b4b62925c0ffcd ${c}/csv/openb_pod_list_gpushare20.csv
alibaba-gpu-v2023/openb_pod_list_gpushare40.csv d83ce79a4eb6987524bedbb0c65e41aed3a36bf6c1b78b86234c3687a07e1d40 ${c}/csv/openb_pod_list_gpushare40.csv
alibaba-gpu-v2023/openb_pod_list_gpushare60.csv d31809628128a1f24491086eda4af3e23882b9213d3ef57a56ee2d1af69492fe ${c}/csv/openb_pod_list_gpushare60.csv
alibaba-gpu-v2023/openb_pod_list_gpushare80.csv 88b6649369ced40d0fde287d2498ea61ff4b05fccba8bdc95daf6042f2f8431e ${c}/csv/openb_pod_list_gpushare80.csv
alibaba-gpu-v2023/openb_pod_list_gpuspec05.csv 8f1c0ef7e4e511e982bd2818898ba22ee6d273bf5fce124b7ace285b5928cf4e ${c}/csv/openb_pod_list_gpuspec05.csv
alibaba-gpu-v2023/openb_pod_list_gpuspec10.csv 2dc7e4cb9480484f08539720b433a9ec9ab5d76b396f3f7557c53a2ff78a7611 ${c}/csv/openb_pod_list_gpuspec10.csv
alibaba-gpu-v2023/openb_pod_list_gpuspec20.csv 6b9b89ab8913c1c074e994e98f548cf1a872fc5f76f2442ca8cd514a478b00a9 ${c}/csv/openb_pod_list_gpuspec20.csv
alibaba-gpu-v2023/openb_pod_list_gpuspec25.csv 9d030679a2ccd7e27a7ec9ff15baff34480d22a0012515691fc187e3f35ee68c ${c}/csv/openb_pod_list_gpuspec25.csv
alibaba-gpu-v2023/openb_pod_list_gpuspec33.csv eca4f746db1e5b25864ad021b55ece3943e101a3ebd4574d09dcb95c46117652 ${c}/csv/openb_pod_list_gpuspec33.csv
alibaba-gpu-v2023/openb_pod_list_multigpu20.csv d9ec6f6c74fb980cc0b81239470c6353fceea077ea9abd610003b604c7cc2b01 ${c}/csv/openb_pod_list_multigpu20.csv
alibaba-gpu-v2023/openb_pod_list_multigpu30.csv a5e479c6444b1d83eef848159cf00c3cfa13441b2d1e2c113c391b91f1cc5b11 ${c}/csv/openb_pod_list_multigpu30.csv
alibaba-gpu-v2023/openb_pod_list_multigpu40.csv 32c9e8731ca07ef96108aa65f2a289bb9aacb47f642ed9e3789f99b242df60eb ${c}/csv/openb_pod_list_multigpu40.csv
alibaba-gpu-v2023/openb_pod_list_multigpu50.csv 206f2f5959db30ecb7c44e7f13197c8ec50b7a35558ad3777cc3662ef0fe5373 ${c}/csv/openb_pod_list_multigpu50.csv
alibaba-gpu-v2023/README.md - ${c}/README.md
alibaba-gpu-v2023/fgd-expected-results/analysis_allo_discrete.csv e00aff5923a52d53e47c16ec9d19190de4e788c15334865a77bd46e1bd006ea1 ${FGD_ARTIFACT}/experiments/analysis/expected_results/analysis_allo_discrete.csv
alibaba-gpu-v2023/fgd-expected-results/analysis_frag_discrete.csv 0d9181864ef9adb2169f232124c6af767579fe2a3c08f940419b4989420c8ce2 ${FGD_ARTIFACT}/experiments/analysis/expected_results/analysis_frag_discrete.csv
alibaba-gpu-v2023/fgd-expected-results/analysis_frag_ratio_discrete.csv 78f55e6324b532c6af8d69da8e312d8cbe6f953719ccfa3f51e5a392b6b1d860 ${FGD_ARTIFACT}/experiments/analysis/expected_results/analysis_frag_ratio_discrete.csv
EOF
}

set_alibaba_gpu_v2025_dlrm() {
  cat <<EOF
alibaba-gpu-v2025-dlrm/disaggregated_DLRM_trace.csv fb17bc4b3f412d5280f70f04a1bdf2adfc4429d1e61237a5b106e86206414295 ${CLUSTERDATA}/cluster-trace-gpu-v2025/disaggregated_DLRM_trace.csv
alibaba-gpu-v2025-dlrm/README.md - ${CLUSTERDATA}/cluster-trace-gpu-v2025/README.md
EOF
}

set_pwa_swf() {
  cat <<EOF
pwa-swf/LCG-2005-1.swf.gz cda5d512febf84a3e07b3ad7b9481f8a0ba0f4c6e10f5d639aae73d2587448d9 cloudsimplus/cloudsimplus/d9872395a4c2a20b8e3cf7d143781da0f5629820/src/test/resources/LCG.swf.gz
pwa-swf/NASA-iPSC-1993-3.1-cln.swf.gz 5589ae9b2fb78e3bf92de097497cf33a91607de1ad54563e43533f7827597f29 cloudsimplus/cloudsimplus-examples/4394086de1dee68fd5d96cf818f92410bb660dfd/src/main/resources/workload/swf/NASA-iPSC-1993-3.1-cln.swf.gz
EOF
}

set_azure_llm_inference_2023() {
  local a="Azure/AzurePublicDataset/b469a113cedca53ddc3bdea71a143dc4b7d8700c/data"
  cat <<EOF
azure-llm-inference-2023/AzureLLMInferenceTrace_code.csv - ${a}/AzureLLMInferenceTrace_code.csv
azure-llm-inference-2023/AzureLLMInferenceTrace_conv.csv - ${a}/AzureLLMInferenceTrace_conv.csv
EOF
}

set_philly() {
  local p="Qinghao-Hu/Philly-Trace-Scripts/2d1478f0b4cd65eb2d80ca489ac2f284164b7441"
  cat <<EOF
philly/cluster_machine_list.csv - ${p}/cluster_machine_list
philly/revised_machine_list.csv - ${p}/revised_machine_list.csv
EOF
}

SETS=(alibaba-gpu-v2023 alibaba-gpu-v2025-dlrm pwa-swf azure-llm-inference-2023 philly)

usage() {
  sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'
}

die_usage() {
  echo "fetch-traces: $*" >&2
  echo "run '$0 --help' for the options" >&2
  exit 2
}

dir="traces"
chosen=()
while (($# > 0)); do
  case "$1" in
    --dir) (($# >= 2)) || die_usage "--dir needs a directory"; dir="$2"; shift 2 ;;
    --dir=*) dir="${1#--dir=}"; shift ;;
    --set) (($# >= 2)) || die_usage "--set needs a name"; chosen+=("$2"); shift 2 ;;
    --set=*) chosen+=("${1#--set=}"); shift ;;
    --list) printf '%s\n' "${SETS[@]}"; exit 0 ;;
    -h|--help) usage; exit 0 ;;
    -*) die_usage "unknown argument '$1'" ;;
    *) dir="$1"; shift ;;
  esac
done
((${#chosen[@]} > 0)) || chosen=(alibaba-gpu-v2023)
if [[ " ${chosen[*]} " == *" all "* ]]; then chosen=("${SETS[@]}"); fi
for s in "${chosen[@]}"; do
  [[ " ${SETS[*]} " == *" ${s} "* ]] || die_usage "unknown set '${s}' (known: ${SETS[*]}, all)"
done
[[ -n "$dir" ]] || die_usage "--dir must not be empty"
for tool in curl sha256sum; do
  command -v "$tool" >/dev/null 2>&1 || { echo "fetch-traces: '$tool' is required" >&2; exit 1; }
done

# Fails early and clearly on a machine without internet access.
if ! curl -sS -o /dev/null --head --connect-timeout "$CONNECT_TIMEOUT" --max-time 30 "${RAW}/" 2>/tmp/fetch-traces.$$; then
  echo "fetch-traces: cannot reach ${RAW} ($(tr -d '\n' </tmp/fetch-traces.$$))." >&2
  echo "fetch-traces: this machine seems offline; copy the traces from a machine with internet" \
       "access (or from ../shared/traces) and set TESSERA_TRACE_DIR." >&2
  rm -f /tmp/fetch-traces.$$
  exit 1
fi
rm -f /tmp/fetch-traces.$$

sha_of() { sha256sum "$1" | cut -d' ' -f1; }

# Percent-encodes the characters of a repository path that a URL cannot carry raw.
url_path() { printf '%s' "$1" | sed -e 's/%/%25/g' -e 's/ /%20/g'; }

partial="${dir}/.partial"
mkdir -p "$partial"
fetched=0 kept=0 unverified=0
for s in "${chosen[@]}"; do
  fn="set_${s//-/_}"
  while read -r target sha source; do
    [[ -n "$target" ]] || continue
    out="${dir}/${target}"
    if [[ -f "$out" && ( "$sha" == "-" || "$(sha_of "$out")" == "$sha" ) ]]; then
      kept=$((kept + 1))
      continue
    fi
    url="${RAW}/$(url_path "$source")"
    tmp="${partial}/$(basename "$target").$$"
    echo "fetch-traces: ${target} <- ${url}"
    if ! curl -sSfL --retry 2 --connect-timeout "$CONNECT_TIMEOUT" --max-time "$MAX_TIME" \
         -o "$tmp" "$url"; then
      rm -f "$tmp"
      echo "fetch-traces: download failed: ${url}" >&2
      exit 1
    fi
    got="$(sha_of "$tmp")"
    if [[ "$sha" == "-" ]]; then
      echo "fetch-traces:   no published checksum; sha256 ${got}"
      unverified=$((unverified + 1))
    elif [[ "$got" != "$sha" ]]; then
      rm -f "$tmp"
      echo "fetch-traces: checksum mismatch for ${target}: expected ${sha}, got ${got}" >&2
      exit 1
    fi
    mkdir -p "$(dirname "$out")"
    mv -f "$tmp" "$out"
    fetched=$((fetched + 1))
  done < <("$fn")
done
rmdir "$partial" 2>/dev/null || true
echo "fetch-traces: ${fetched} fetched, ${kept} already present (verified), ${unverified} without a" \
     "published checksum; in ${dir}. Use: TESSERA_TRACE_DIR=${dir}"
