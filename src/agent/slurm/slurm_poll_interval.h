// SlurmPollInterval: how long the Slurm backend's poll thread waits before it next asks
// slurmrestd for the job list — short while Tessera has jobs in Slurm that have not been seen
// ending (so a freed slot is known, and refilled, within a fraction of a second), long when it
// has none, and longer after failures.
//
// Policy (docs/agents/slurm.md, "Polling"):
//   Tessera's jobs outstanding in Slurm   `active` (default 200 ms), but at least the time the
//                                         last poll took: slurmrestd spends at most half its
//                                         time answering this agent's job list
//   none outstanding                      `idle` (default 1 s, SlurmClusterOptions::poll_interval)
//   the last poll failed                  the previous wait doubled, from `active` up to `idle`
//                                         (an unreachable slurmrestd is not asked 5 times a second)
// A poll that slurmrestd answered "nothing changed" (HTTP 304 to update_time) counts as a
// success: it costs slurmrestd almost nothing.
//
// Units: Duration (ms). Pure value type: not thread-safe; the poll thread owns it.
#pragma once

#include "tessera/common/clock.h"

namespace tessera::agent {

struct SlurmPollIntervals {
  Duration active{200};  // while Tessera's jobs are outstanding in Slurm
  Duration idle{1000};   // while none are; and the longest back-off after failures
};

class SlurmPollInterval {
 public:
  // REQUIRES: 0 < active <= idle (SlurmCluster::Create checks the options).
  explicit SlurmPollInterval(SlurmPollIntervals intervals);

  // The wait before the next poll, after a poll that took `took` (by the injected clock).
  // `outstanding`: Tessera has jobs in Slurm not yet seen ending (or launches waiting to be
  // submitted); `failed`: the poll got no usable answer.
  Duration Next(bool outstanding, bool failed, Duration took);

 private:
  const SlurmPollIntervals intervals_;
  Duration last_{0};  // the previous wait; 0 before the first
};

}  // namespace tessera::agent
