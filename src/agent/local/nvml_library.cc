#include <dlfcn.h>

#include <string>

#include "absl/status/status.h"
#include "agent/local/nvml.h"
#include "fmt/format.h"

namespace tessera::agent {
namespace {

// Looks `name` up and stores it, typed as the C function it is, in `out`.
template <typename Fn>
bool Bind(void* handle, const char* name, Fn& out, std::string& missing) {
  void* symbol = ::dlsym(handle, name);
  if (symbol == nullptr) {
    missing = name;
    return false;
  }
  out = reinterpret_cast<Fn>(symbol);
  return true;
}

}  // namespace

absl::StatusOr<std::unique_ptr<NvmlLibrary>> NvmlLibrary::Open(const std::string& path) {
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = ::dlerror();
    return absl::NotFoundError(
        fmt::format("cannot load {}: {}", path, error != nullptr ? error : "unknown error"));
  }
  int (*init)() = nullptr;
  int (*shutdown)() = nullptr;
  int (*get_count)(unsigned int*) = nullptr;
  int (*get_handle)(unsigned int, NvmlDevice*) = nullptr;
  int (*get_name)(NvmlDevice, char*, unsigned int) = nullptr;
  int (*get_uuid)(NvmlDevice, char*, unsigned int) = nullptr;
  int (*get_memory)(NvmlDevice, NvmlMemory*) = nullptr;
  const char* (*error_string)(int) = nullptr;
  std::string missing;
  const bool ok = Bind(handle, "nvmlInit_v2", init, missing) &&
                  Bind(handle, "nvmlShutdown", shutdown, missing) &&
                  Bind(handle, "nvmlDeviceGetCount_v2", get_count, missing) &&
                  Bind(handle, "nvmlDeviceGetHandleByIndex_v2", get_handle, missing) &&
                  Bind(handle, "nvmlDeviceGetName", get_name, missing) &&
                  Bind(handle, "nvmlDeviceGetUUID", get_uuid, missing) &&
                  Bind(handle, "nvmlDeviceGetMemoryInfo", get_memory, missing) &&
                  Bind(handle, "nvmlErrorString", error_string, missing);
  if (!ok) {
    ::dlclose(handle);
    return absl::FailedPreconditionError(
        fmt::format("{} has no symbol {}: driver too old?", path, missing));
  }
  NvmlFunctions functions{.init = init,
                          .shutdown = shutdown,
                          .device_get_count = get_count,
                          .device_get_handle_by_index = get_handle,
                          .device_get_name = get_name,
                          .device_get_uuid = get_uuid,
                          .device_get_memory_info = get_memory,
                          .error_string = error_string};
  return std::unique_ptr<NvmlLibrary>(new NvmlLibrary(handle, std::move(functions)));
}

NvmlLibrary::~NvmlLibrary() { ::dlclose(handle_); }

}  // namespace tessera::agent
