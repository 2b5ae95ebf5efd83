// tessera-kube-fixture: runs the fixture API server (fake_api_server.h) on its own, for
// trying `tessera agent --backend kubernetes` or kubectl against it by hand and for the
// kubectl compatibility test.
//
//   tessera-kube-fixture [--token T] [--nodes N] [--gpus G]
//
// Prints "url <http://127.0.0.1:PORT>" on the first line of standard output, then serves until
// standard input closes. N nodes named node-0..node-{N-1} with G GPUs each are added.
#include <cstdlib>
#include <iostream>
#include <string>

#include "agent/kubernetes/testing/fake_api_server.h"

int main(int argc, char** argv) {
  using tessera::agent::k8s::testing::FakeApiServer;
  tessera::agent::k8s::testing::FakeApiServerOptions options;
  int nodes = 2;
  int gpus = 4;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--token") {
      options.token = argv[i + 1];
    } else if (flag == "--nodes") {
      nodes = std::atoi(argv[i + 1]);
    } else if (flag == "--gpus") {
      gpus = std::atoi(argv[i + 1]);
    } else {
      std::cerr << "usage: tessera-kube-fixture [--token T] [--nodes N] [--gpus G]\n";
      return 2;
    }
  }
  auto server = FakeApiServer::Start(options);
  if (!server.ok()) {
    std::cerr << "tessera-kube-fixture: " << server.status() << "\n";
    return 1;
  }
  for (int i = 0; i < nodes; ++i) {
    (*server)->AddNode({.name = "node-" + std::to_string(i),
                        .gpus = gpus,
                        .gpu_product = "NVIDIA-A100-SXM4-80GB",
                        .gpu_memory_mib = 81920});
  }
  std::cout << "url " << (*server)->url() << std::endl;
  std::string line;
  while (std::getline(std::cin, line)) {
  }
  return 0;
}
