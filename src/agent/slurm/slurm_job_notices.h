// SlurmJobNotices: where the Slurm backend hears that a job ended, so that it reads that job at
// once instead of at its next poll, and Tessera refills the slot the job freed within
// milliseconds rather than at the next poll (docs/agents/slurm.md, "Job-end notices").
//
// slurmctld runs the script named by JobCompLoc as each job ends (JobCompType=jobcomp/script,
// the job's id in $JOBID); deploy/slurm/tessera-job-ended.sh posts it here:
//
//   POST /slurm/job-ended   body "job_id=<Slurm job id>" (slurm_job_notice.h)
//     204  taken
//     400  the body names no job id; the answer says why ("job_id: missing")
//     404  any other path or method
//
// A notice is only a hint: the backend reads the job from slurmrestd before it reports
// anything, so a forged or repeated notice costs one read and changes nothing. Notices about
// jobs the backend does not follow (other users' jobs) are dropped without a read.
//
// Thread-safety: `on_notice` runs on the listener's threads, possibly several at once, and
// must be thread-safe; no call is made once the destructor has returned.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "absl/status/statusor.h"
#include "agent/slurm/slurm_job_notice.h"

namespace httplib {
class Server;
}

namespace tessera::agent {

struct SlurmNoticeAddress {
  std::string host = "127.0.0.1";
  int port = 0;  // 0: a free port (tests)
};

class SlurmJobNotices {
 public:
  using OnNotice = std::function<void(int64_t job_id)>;

  // Listens on `address`. Unavailable when it cannot bind there (the error names the address).
  static absl::StatusOr<std::unique_ptr<SlurmJobNotices>> Start(const SlurmNoticeAddress& address,
                                                                OnNotice on_notice);
  // Stops listening and waits for the calls in progress.
  ~SlurmJobNotices();
  SlurmJobNotices(const SlurmJobNotices&) = delete;
  SlurmJobNotices& operator=(const SlurmJobNotices&) = delete;

  // The port it listens on.
  int port() const { return port_; }

 private:
  SlurmJobNotices(std::unique_ptr<httplib::Server> server, int port);

  std::unique_ptr<httplib::Server> server_;
  int port_ = 0;
  std::thread listener_;
};

}  // namespace tessera::agent
