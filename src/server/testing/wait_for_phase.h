// WaitForPhase: for tests of a JobService whose loop runs on its own thread — polls the job until
// it reaches a phase. Real time is used only as a hang guard (a generous bound, 20 s), never to
// judge speed: the test fails when the job does not get there at all.
// Thread-safe as the service is.
#pragma once

#include <chrono>
#include <string>
#include <thread>

#include "gtest/gtest.h"
#include "server/job_service.h"

namespace tessera::server {

// The job's view once its phase is `phase`; the last view read (and a test failure) when it does
// not get there, or when the job cannot be read.
inline JobView WaitForPhase(JobService& service, const Caller& caller, const std::string& id,
                            JobPhase phase) {
  JobView view;
  for (int i = 0; i < 4000; ++i) {
    absl::StatusOr<JobView> got = service.Get(caller, id);
    EXPECT_TRUE(got.ok()) << got.status();
    if (!got.ok()) return view;
    view = *std::move(got);
    if (view.document.status->phase == phase) return view;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ADD_FAILURE() << "job " << id << " stayed " << JobPhaseName(view.document.status->phase)
                << " (" << view.document.status->reason << ": " << view.document.status->message
                << "), expected " << JobPhaseName(phase);
  return view;
}

}  // namespace tessera::server
