// Resources: a vector of quantities in Tessera's standard units.
//
//   cpu         millicores (1000 = one core)
//   memory      bytes
//   gpu         milli-GPU (1000 = one whole GPU); a node's capacity, or a task's total share
//   gpu_memory  bytes
//   extended    named extended resources ("rdma/hca", "ephemeral-storage"), plain counts
//
// A value type; not thread-safe for concurrent mutation, safe to share when const.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace tessera {

struct Resources {
  int64_t cpu = 0;         // millicores
  int64_t memory = 0;      // bytes
  int64_t gpu = 0;         // milli-GPU
  int64_t gpu_memory = 0;  // bytes
  std::map<std::string, int64_t, std::less<>> extended;

  // Field-wise sums, saturating at the int64 limits. Extended entries that become zero are
  // dropped, so `a += b; a -= b;` restores `a` exactly when nothing saturated.
  Resources& operator+=(const Resources& o);
  Resources& operator-=(const Resources& o);
  friend Resources operator+(Resources a, const Resources& b) { return a += b; }
  friend Resources operator-(Resources a, const Resources& b) { return a -= b; }
  friend bool operator==(const Resources&, const Resources&) = default;

  // True when every quantity of this is <= the same quantity of `limit` (missing = 0).
  bool FitsIn(const Resources& limit) const;
  bool IsZero() const;
  // "cpu=8, memory=64Gi, gpu=4" (zero quantities left out, "none" when all are zero); for
  // messages and logs.
  std::string ToString() const;
};

}  // namespace tessera
