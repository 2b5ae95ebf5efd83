// CycleState: a typed scratchpad that lives for one scheduling attempt of one task.
//
// Expensive per-task work is done once (PreFilter, PreScore) and read for every node
// (Filter, Score). Keys are typed, so reading a value needs no downcast at the call site:
//
//   inline const StateKey<FitPreState> kFitKey{"NodeResourcesFit/pre"};
//   state.Write(kFitKey, FitPreState{...});
//   const FitPreState* pre = state.Read(kFitKey);
//
// Clone() copies every value (values must be copyable); preemption uses it for what-ifs.
// Thread-safety: written only by the scheduling thread before the parallel Filter/Score fan-out;
// concurrent Read() calls are safe while nobody writes.
#pragma once

#include <any>
#include <string_view>
#include <utility>
#include <vector>

namespace tessera {

template <typename T>
struct StateKey {
  std::string_view name;  // "<PluginName>/<what>"; must be unique per type
};

class CycleState {
 public:
  template <typename T>
  void Write(const StateKey<T>& key, T value) {
    for (auto& [name, v] : entries_) {
      if (name == key.name) {
        v = std::move(value);
        return;
      }
    }
    entries_.emplace_back(key.name, std::any(std::move(value)));
  }

  // nullptr when the key was never written.
  template <typename T>
  const T* Read(const StateKey<T>& key) const {
    for (const auto& [name, v] : entries_) {
      if (name == key.name) return std::any_cast<T>(&v);
    }
    return nullptr;
  }

  template <typename T>
  T* Mutable(const StateKey<T>& key) {
    for (auto& [name, v] : entries_) {
      if (name == key.name) return std::any_cast<T>(&v);
    }
    return nullptr;
  }

  CycleState Clone() const { return *this; }
  void Clear() { entries_.clear(); }

 private:
  std::vector<std::pair<std::string_view, std::any>> entries_;
};

}  // namespace tessera
