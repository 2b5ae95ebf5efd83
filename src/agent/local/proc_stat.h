// ProcStat: what the executor reads about a process from /proc, to recognise it again.
//
// A pid alone does not name a process for long: after it exits, the kernel may hand the number
// to another one. (pid, start time in clock ticks since boot, boot id) does: the start time is
// field 22 of /proc/<pid>/stat and the boot id (/proc/sys/kernel/random/boot_id) changes on
// every boot. The executor records the triple when it starts a task and compares it before it
// adopts or signals a process it did not start itself.
//
// `proc_root` is "/proc" except in tests. Functions are thread-safe. Errors: NotFound when the
// process does not exist; DataLoss when the file cannot be parsed.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace tessera::agent {

struct ProcStat {
  char state = '?';  // R, S, D, Z (zombie: exited, not yet reaped), T, ...
  pid_t ppid = 0;
  pid_t pgrp = 0;  // process group
  pid_t session = 0;
  uint64_t start_ticks = 0;  // start time, clock ticks after boot
};

// Parses the contents of /proc/<pid>/stat. The command name (field 2) may hold spaces and
// parentheses; fields are counted after its last ')'.
absl::StatusOr<ProcStat> ParseProcStat(std::string_view text);

absl::StatusOr<ProcStat> ReadProcStat(pid_t pid, std::string_view proc_root = "/proc");

// The current boot's id, without the trailing newline.
absl::StatusOr<std::string> ReadBootId(std::string_view proc_root = "/proc");

}  // namespace tessera::agent
