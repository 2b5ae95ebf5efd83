// Device selection helpers shared by the device policies of Reserve plugins.
//
// All functions are pure: they read a Node and a TaskRequest and return device indices
// (ascending) or an empty vector when the task's GPUs do not fit. They honour device health,
// the task's allowed models, its milli-GPU per device and its GPU memory per device.
// Thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "core/job.h"
#include "core/node.h"

namespace tessera {

using DeviceList = absl::InlinedVector<int32_t, 8>;

// True when device `d` can take one unit of the task (model allowed, enough free milli-GPU and
// memory). A whole-GPU task (gpu_milli == 1000) needs the device fully free.
bool DeviceFits(const GpuDevice& d, const TaskRequest& task);

// Indices of every device that DeviceFits, ascending.
DeviceList FeasibleDevices(const Node& node, const TaskRequest& task);

// The tightest choice: for a sharing task the feasible device with the least free milli-GPU
// (lowest index on ties); for whole-GPU tasks the lowest-index fully free devices.
// Empty when fewer than gpu_count devices fit. Source: the "best" GPU selection of the FGD
// paper's artifact (open-gpu-share).
DeviceList SelectTightestDevices(const Node& node, const TaskRequest& task);

}  // namespace tessera
