// The Kubernetes objects FakeApiServer keeps, as plain JSON: reads of their metadata and pod
// status, and the container states the fixture writes when a test moves a pod along.
// Shapes follow the Kubernetes v1 API (Pod, Node). Pure functions; any thread.
#pragma once

#include <string>

#include "agent/kubernetes/testing/fake_api_server.h"

namespace tessera::agent::k8s::testing {

// The current time as Kubernetes writes it: RFC 3339 in UTC, whole seconds.
std::string NowText();

// metadata.KEY as a string; "" when absent or not a string.
std::string MetaString(const Json& object, const char* key);

// The name of the pod's first container; "task" when it has none.
std::string ContainerName(const Json& pod);

// status.phase; "Pending" when unset.
std::string Phase(const Json& pod);

// The running container's startedAt, for the terminated state that follows it; now when the
// pod never ran.
std::string StartedAt(const Json& pod);

// status.containerStatuses for a pod whose container terminated now with `exit_code` and
// `reason`.
Json Terminated(const Json& pod, int exit_code, const std::string& reason);

}  // namespace tessera::agent::k8s::testing
