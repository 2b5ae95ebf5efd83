# Tessera — top-level entry points. See README.md.
#
#   make run     build, then run the control plane in dev mode with a replayed real workload
#   make reproduce  the FGD paper reproduction with FGD-CPU and the packing bound (70 simulator
#                   runs; report in out/)
#   make test    build and run every test tier: unit, scenario, slow (trace reproduction),
#                integration (a real server over HTTP and gRPC, crash recovery),
#                sanitizers (ASan + UBSan), and a short fuzzing run
#   make bench   build and run the benchmarks (results: docs/benchmarks.md)
#   make soak    long runs outside make test (50 failover rounds of the HA control plane)
#   make build   configure and build the release tree only

BUILD      ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
JOBS       ?= $(shell nproc)
FUZZ_SECONDS ?= 20
TRACE_DIR  ?= $(or $(TESSERA_TRACE_DIR),$(if $(wildcard ../shared/traces),../shared/traces,traces))
OUT        ?= out
# ccache, where installed (scripts/install-deps.sh does): a rebuild in another clone of the
# repository reuses the objects compiled here, since paths are hashed relative to the clone.
# Expanded when a recipe runs (not when the Makefile is read), so that the first build on a new
# machine uses the ccache that `deps` has just installed.
LAUNCHER    = $(if $(shell command -v ccache),-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
export CCACHE_BASEDIR := $(CURDIR)
# The sanitizer and fuzzing trees carry debug info (-g): without this, ccache hashes the build
# directory's absolute path into those objects, and another clone compiles them all again.
export CCACHE_NOHASHDIR := 1

.PHONY: deps build run reproduce test test-unit test-scenario test-slow test-asan test-fuzz bench clean soak

deps:
	@bash scripts/install-deps.sh

build: deps
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release $(LAUNCHER)
	ninja -C $(BUILD) -j $(JOBS)

$(TRACE_DIR)/alibaba-gpu-v2023/openb_pod_list_default.csv:
	bash scripts/fetch-traces.sh $(TRACE_DIR)

run: build $(TRACE_DIR)/alibaba-gpu-v2023/openb_pod_list_default.csv
	bash scripts/run-dev.sh $(BUILD) $(TRACE_DIR) $(OUT)/dev

reproduce: build $(TRACE_DIR)/alibaba-gpu-v2023/openb_pod_list_default.csv
	@mkdir -p $(OUT)
	$(BUILD)/bin/tessera sim \
	  --nodes $(TRACE_DIR)/alibaba-gpu-v2023/openb_node_list_gpu_node.csv \
	  --pods $(TRACE_DIR)/alibaba-gpu-v2023/openb_pod_list_default.csv \
	  --policies all --seeds 42-51 --inflate 1.3 \
	  --expected $(TRACE_DIR)/alibaba-gpu-v2023/fgd-expected-results \
	  --summary-json $(OUT)/fgd-summary.json --report $(OUT)/fgd-report.html
	@echo "report: $(abspath $(OUT))/fgd-report.html"

test: build test-unit test-scenario test-slow test-integration test-asan test-fuzz
	@echo "make test: every tier passed"

test-unit: build
	cd $(BUILD) && ctest -L unit --output-on-failure -j $(JOBS)

test-scenario: build
	cd $(BUILD) && ctest -L scenario --output-on-failure -j $(JOBS)

test-slow: build
	cd $(BUILD) && TESSERA_TRACE_DIR=$(abspath $(TRACE_DIR)) ctest -L slow --output-on-failure

test-integration: build
	cd $(BUILD) && ctest -L integration --output-on-failure

# Long runs outside `make test`: 50 failover rounds of the HA control plane (docs/operations.md).
soak: build
	cd $(BUILD) && TESSERA_FAILOVER_ROUNDS=50 ctest -R integration_server_failover_test --output-on-failure

# The unit and scenario tests under ASan/UBSan, but for the scenario that runs a million
# instants to reach the run's cap: 12 minutes here under the sanitizers, 10 s in the release
# tier (test-scenario), which runs it.
test-asan: deps
	cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DTESSERA_SANITIZE=ON -DTESSERA_BENCH=OFF \
	  $(LAUNCHER)
	ninja -C $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && ctest -L 'unit|scenario' -E 'run-stopped-at-instant-cap' --output-on-failure -j $(JOBS)

test-fuzz: deps
	CC=clang CXX=clang++ cmake -S . -B $(FUZZ_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DTESSERA_FUZZ=ON -DTESSERA_BENCH=OFF $(LAUNCHER)
	ninja -C $(FUZZ_BUILD) -j $(JOBS) fuzzers
	cd $(FUZZ_BUILD) && ctest -L fuzz --output-on-failure
	bash scripts/run-fuzzers.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

bench: build
	TESSERA_TRACE_DIR=$(abspath $(TRACE_DIR)) $(BUILD)/bench/placement_benchmark
	$(BUILD)/src/sched/plugins/gpushare/fragmentation_benchmark
	$(BUILD)/bench/store_benchmark
	$(BUILD)/src/sched/queue/admission_benchmark
	$(BUILD)/src/sched/preemption/victim_search_benchmark 500
	$(BUILD)/src/sched/backfill/backfill_benchmark
	$(BUILD)/bench/scheduler_cycle_benchmark
	$(BUILD)/bench/agent_scale/agent_scale_bench --agents 10 --nodes-per-agent 1000 --rate-hz 100 --seconds 30
	bash scripts/bench-reproduction.sh $(BUILD) $(TRACE_DIR)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD) $(OUT)

# Batch-scheduling results on the Parallel Workloads Archive logs (docs/results/swf-nasa-ipsc.md).
.PHONY: swf-results
swf-results: build
	bash scripts/swf-results.sh $(BUILD) $(TRACE_DIR) $(OUT)/swf
