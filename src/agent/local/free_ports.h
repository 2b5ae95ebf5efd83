// PickFreePorts: TCP ports for the tasks of a multi-task job on the local cluster.
//
// On one machine every task of a distributed job needs its own port (TF_CONFIG lists one per
// worker; rank 0's is MASTER_PORT). PickFreePorts binds `count` sockets to port 0 of `address`
// at once, so the kernel hands out distinct free ports, and closes them again. The usual caveat
// of this technique applies: another process may take a port before the task binds it; the
// window is the time between this call and the task's start.
//
// Thread-safe. Errors: InvalidArgument for a bad count or address, Unavailable when the kernel
// refuses a socket (with its message).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace tessera::agent {

absl::StatusOr<std::vector<int32_t>> PickFreePorts(int count,
                                                   const std::string& address = "127.0.0.1");

}  // namespace tessera::agent
