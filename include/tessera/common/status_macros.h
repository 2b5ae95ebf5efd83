// Status propagation helpers over absl::Status / absl::StatusOr.
//
// Failures (bad input, I/O, configuration) travel as absl::Status; scheduling verdicts
// ("does not fit") never do — see tessera/sched/sched_status.h. No exception crosses a
// module boundary. Thread-safe: these are plain macros.
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"

// Returns from the enclosing function when `expr` yields a non-OK status.
#define TESSERA_RETURN_IF_ERROR(expr)          \
  do {                                         \
    ::absl::Status _tessera_status = (expr);   \
    if (!_tessera_status.ok()) return _tessera_status; \
  } while (0)

#define TESSERA_CONCAT_INNER_(a, b) a##b
#define TESSERA_CONCAT_(a, b) TESSERA_CONCAT_INNER_(a, b)

// `lhs = value of statusor_expr`, or returns its status when not OK.
#define TESSERA_ASSIGN_OR_RETURN(lhs, expr) \
  TESSERA_ASSIGN_OR_RETURN_IMPL_(TESSERA_CONCAT_(_tessera_or_, __LINE__), lhs, expr)
#define TESSERA_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                  \
  if (!tmp.ok()) return tmp.status();                 \
  lhs = std::move(tmp).value()
