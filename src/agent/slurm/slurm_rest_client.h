// SlurmRestClient: the calls Tessera makes to slurmrestd, over a SlurmTransport.
//
// SlurmTransport is one HTTP exchange (method, path, JSON body → status, body); the real one
// speaks HTTP or HTTPS to slurmrestd and sends the JWT headers X-SLURM-USER-NAME and
// X-SLURM-USER-TOKEN with every request; tests substitute an in-memory Slurm. A token given as
// a file is read again before a request whenever the file's modification time or size changed,
// so a refresher that rewrites it (`scontrol token` from cron) keeps a long-running agent
// working; surrounding whitespace is dropped.
//
// Errors: Unavailable when slurmrestd cannot be reached or does not answer in time;
// Unauthenticated for HTTP 401 (a missing or refused user name or token) and for a token file
// that cannot be read or is empty (naming the file); otherwise the status
// carries slurmrestd's own error text ("GET /slurm/v0.0.38/nodes: HTTP 500: Unspecified
// error"). Replies are parsed by slurm_inventory.h and slurm_jobs.h.
//
// Connections are kept alive, except after an error reply and after an incremental read
// (`?update_time=`): slurmrestd 22.05 sends its 304 with no length, ended only by the close.
//
// Thread-safety: the HTTP transport and the client may be used from several threads at once
// (each request takes the transport's lock; slurmrestd is asked one thing at a time).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "agent/slurm/slurm_jobs.h"
#include "tessera/common/clock.h"

namespace tessera::agent {

struct SlurmHttpReply {
  int status = 0;
  std::string body;
};

class SlurmTransport {
 public:
  virtual ~SlurmTransport() = default;
  // One request. `path` starts with "/slurm/"; `body` is JSON, or "" for none. Unavailable
  // when no reply arrived.
  virtual absl::StatusOr<SlurmHttpReply> Send(std::string_view method, const std::string& path,
                                              const std::string& body) = 0;
};

struct SlurmHttpOptions {
  std::string url;       // "http://host:6820" or "https://..."
  std::string user;      // X-SLURM-USER-NAME
  std::string jwt;       // X-SLURM-USER-TOKEN
  std::string jwt_file;  // or: a file holding it, read again when it changes; wins over `jwt`
  Duration timeout{10000};
};

// InvalidArgument for a URL that is not http(s)://host[:port].
absl::StatusOr<std::unique_ptr<SlurmTransport>> NewHttpSlurmTransport(SlurmHttpOptions options);

class SlurmRestClient {
 public:
  // `transport` must outlive the client. `api_version`: "v0.0.38" (slurm_api_version.h).
  SlurmRestClient(SlurmTransport* transport, std::string api_version);

  // Whether slurmrestd serves this client's version: GET /ping answered anything but HTTP 404
  // (an answer about a slurmctld that is down still shows the path is served).
  absl::StatusOr<bool> ServesVersion();
  // The raw node list, for ParseSlurmNodes.
  absl::StatusOr<std::string> Nodes();
  absl::StatusOr<SlurmJobList> Jobs();
  // Incremental reads (`?update_time=`, epoch seconds on slurmctld's clock): nullopt when
  // Slurm answers that nothing of that kind changed since `update_time` (HTTP 304; for jobs
  // from v0.0.39 HTTP 200 with no jobs and the warning "No job changes since update_time=T",
  // SlurmJobList::unchanged); otherwise
  // the whole list, as Nodes() and Jobs() read it (Slurm 22.05 sends every job, not only those
  // that changed). slurmctld's test is per second: a change in the second `update_time` names
  // is reported. slurmrestd 22.05 answers a node list that did change with HTTP 500
  // "Unspecified error" and no nodes (its partition read sees no change); NodesChangedSince
  // then reads the whole list.
  absl::StatusOr<std::optional<std::string>> NodesChangedSince(int64_t update_time);
  absl::StatusOr<std::optional<SlurmJobList>> JobsChangedSince(int64_t update_time);
  // slurmctld's clock (GET /diag, statistics.req_time), epoch seconds.
  absl::StatusOr<int64_t> SlurmTime();
  // nullopt when Slurm does not know the job (any more).
  absl::StatusOr<std::optional<SlurmJob>> Job(int64_t job_id);
  // The new job's id (see ParseSubmitReply).
  absl::StatusOr<int64_t> Submit(const std::string& body);
  // Sends `signal` ("TERM") to every process of the job, or cancels it ("" — Slurm's own
  // cancel: SIGTERM, then SIGKILL after its KillWait). A job that already ended is no error.
  absl::Status Signal(int64_t job_id, std::string_view signal);

 private:
  absl::StatusOr<SlurmHttpReply> Call(std::string_view method, std::string_view resource,
                                      const std::string& body);
  // A GET answered 200 or 304; any other status is Unavailable with slurmrestd's error text.
  absl::StatusOr<SlurmHttpReply> Read(std::string_view resource);
  // A GET answered 200: its body.
  absl::StatusOr<std::string> List(std::string_view resource);

  SlurmTransport* const transport_;
  const std::string prefix_;  // "/slurm/v0.0.38"
};

}  // namespace tessera::agent
