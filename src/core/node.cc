#include "core/node.h"

#include <cstdint>
#include <string>

namespace tessera {

std::string_view TaintEffectName(TaintEffect effect) {
  switch (effect) {
    case TaintEffect::kNoSchedule:
      return "NoSchedule";
    case TaintEffect::kPreferNoSchedule:
      return "PreferNoSchedule";
    case TaintEffect::kNoExecute:
      return "NoExecute";
  }
  return "NoSchedule";
}

int64_t Node::FreeGpuMilli() const {
  int64_t free = 0;
  for (const GpuDevice& device : gpus) free += device.FreeMilli();
  return free;
}

const std::string& Node::GpuModel() const {
  static const std::string* const kNone = new std::string();
  return gpus.empty() ? *kNone : gpus.front().model;
}

}  // namespace tessera
