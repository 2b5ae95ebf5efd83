#include "agent/slurm/slurm_poll_interval.h"

#include <algorithm>

namespace tessera::agent {

SlurmPollInterval::SlurmPollInterval(SlurmPollIntervals intervals) : intervals_(intervals) {}

Duration SlurmPollInterval::Next(bool outstanding, bool failed, Duration took) {
  if (failed) {
    last_ = std::clamp(last_ * 2, intervals_.active, intervals_.idle);
  } else if (outstanding) {
    last_ = std::clamp(took, intervals_.active, intervals_.idle);
  } else {
    last_ = intervals_.idle;
  }
  return last_;
}

}  // namespace tessera::agent
