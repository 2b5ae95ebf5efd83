// SlurmJobCompFollower: follows Slurm's job-completion log, so that the Slurm backend hears of a
// job's end the moment slurmctld records it, instead of at its next poll, and Tessera refills
// the slot the job freed at once (docs/agents/slurm.md, "Job-end notices").
//
// slurmctld appends one line per ended job to the file JobCompLoc names when
// JobCompType=jobcomp/filetxt (slurm_jobcomp_line.h). The plugin writes from within slurmctld:
// no process is started per job, so it costs slurmctld next to nothing. The follower reads the
// file every `interval` from where it last stopped — from its end at Start: lines already there
// are old news — and hands each new line's job id on. A file that does not exist yet is
// followed from when it appears; one replaced or truncated (log rotation) is read from its
// start. A malformed line is logged and skipped. The agent must be able to read the file: run
// it on the slurmctld host or put JobCompLoc on a filesystem both see.
//
// Time: `interval` is waited on the system clock by the follower's own thread.
// Thread-safety: `on_job_ended` and `log` run on the follower's thread; no call is made once the
// destructor has returned.
#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "agent/slurm/slurm_jobs.h"
#include "tessera/common/clock.h"

namespace tessera::agent {

class SlurmJobCompFollower {
 public:
  using OnJobEnded = std::function<void(const SlurmJob& logged)>;
  using Log = std::function<void(std::string_view line)>;

  // Starts following `path` from its current end.
  SlurmJobCompFollower(std::string path, Duration interval, OnJobEnded on_job_ended, Log log);
  // Stops the thread and waits for it.
  ~SlurmJobCompFollower();
  SlurmJobCompFollower(const SlurmJobCompFollower&) = delete;
  SlurmJobCompFollower& operator=(const SlurmJobCompFollower&) = delete;

 private:
  void Run();
  // Reads what was appended since the last look; false when the file cannot be read.
  bool ReadNew();

  const std::string path_;
  const Duration interval_;
  const OnJobEnded on_job_ended_;
  const Log log_;
  // The follower thread's own: the file being read (inode 0: none yet), where it stopped, and
  // the start of a line not yet ended by a newline.
  ino_t inode_ = 0;
  off_t offset_ = 0;
  std::string partial_;
  bool missing_logged_ = false;

  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace tessera::agent
