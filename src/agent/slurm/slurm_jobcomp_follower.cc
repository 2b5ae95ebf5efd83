#include "agent/slurm/slurm_jobcomp_follower.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <utility>

#include "agent/slurm/slurm_jobcomp_line.h"
#include "fmt/format.h"

namespace tessera::agent {
namespace {

// A line longer than this is not Slurm's: it is dropped, and the next one read.
constexpr size_t kMaxLine = 1 << 20;

}  // namespace

SlurmJobCompFollower::SlurmJobCompFollower(std::string path, Duration interval,
                                           OnJobEnded on_job_ended, Log log)
    : path_(std::move(path)),
      interval_(interval),
      on_job_ended_(std::move(on_job_ended)),
      log_(std::move(log)) {
  struct stat status {};
  if (::stat(path_.c_str(), &status) == 0) {
    inode_ = status.st_ino;
    offset_ = status.st_size;
  }
  thread_ = std::thread([this] { Run(); });
}

SlurmJobCompFollower::~SlurmJobCompFollower() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void SlurmJobCompFollower::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!wake_.wait_for(lock, interval_, [this] { return stopping_; })) {
    lock.unlock();
    ReadNew();
    lock.lock();
  }
}

bool SlurmJobCompFollower::ReadNew() {
  struct stat status {};
  if (::stat(path_.c_str(), &status) != 0) {
    if (!missing_logged_) {
      log_(fmt::format("job-completion log {}: {} (followed once it appears)", path_,
                       std::strerror(errno)));
      missing_logged_ = true;
    }
    inode_ = 0;  // a file that appears later holds only new lines
    offset_ = 0;
    partial_.clear();
    return false;
  }
  missing_logged_ = false;
  if (status.st_ino != inode_ || status.st_size < offset_) {  // replaced or truncated
    inode_ = status.st_ino;
    offset_ = 0;
    partial_.clear();
  }
  if (status.st_size == offset_) return true;
  std::ifstream in(path_, std::ios::binary);
  if (!in.seekg(offset_)) return false;
  std::string chunk(static_cast<size_t>(status.st_size - offset_), '\0');
  in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
  chunk.resize(static_cast<size_t>(in.gcount()));
  offset_ += static_cast<off_t>(chunk.size());
  partial_ += chunk;
  size_t start = 0;
  for (size_t newline; (newline = partial_.find('\n', start)) != std::string::npos;
       start = newline + 1) {
    absl::StatusOr<SlurmJob> logged =
        ParseJobCompLine(std::string_view(partial_).substr(start, newline - start));
    if (logged.ok()) {
      on_job_ended_(*logged);
    } else {
      log_(fmt::format("job-completion log {}: a line is skipped: {}", path_,
                       std::string(logged.status().message())));
    }
  }
  partial_.erase(0, start);
  if (partial_.size() > kMaxLine) {
    log_(fmt::format("job-completion log {}: a line longer than {} bytes is skipped", path_,
                     kMaxLine));
    partial_.clear();
  }
  return true;
}

}  // namespace tessera::agent
