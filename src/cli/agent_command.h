// `tessera agent`: connects one cluster to a control plane over the agent protocol
// (agent/runtime/agent_runner.h; docs/agents/).
//
//   tessera agent --server HOST:PORT --cluster NAME --backend local|sim|slurm|kubernetes
//                 [--token T | --token-file F | $TESSERA_TOKEN] [--label k=v ...]
//                 [--tls-ca ca.pem] [backend flags]
//
// Backends: local (this machine's processes; --data-dir for task state and logs), sim (a
// simulated fleet: --sim-nodes FILE, an Alibaba-format node list, or --sim-node-count N with
// --sim-gpus/--sim-gpu-model/--sim-cpu/--sim-memory), slurm (slurmrestd: --slurm-* flags or
// the SLURM_REST_* environment) and kubernetes (--kubeconfig, in-cluster when run in a pod).
//
// Runs until SIGINT or SIGTERM (exit 0); exit 1 when the backend cannot start or the server
// refuses the agent for good (the reason on stderr); 2 for bad usage.
#pragma once

namespace tessera::cli {

int RunAgentCommand(int argc, char** argv);

}  // namespace tessera::cli
