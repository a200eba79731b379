#include "support/daemon_process.hpp"

#include <algorithm>
#include <csignal>
#include <stdexcept>
#include <string>
#include <thread>

#include "support/socket_probe.hpp"

namespace handoff::test {

daemon_process::daemon_process(std::vector<std::string> extra_args, std::chrono::milliseconds start_timeout)
    : dir_("handoffd-test"),
      socket_(dir_ / "run/handoffd.sock"),
      artifacts_(dir_ / "artifacts"),
      queue_(dir_ / "queue"),
      log_(dir_ / "handoffd.log"),
      extra_(std::move(extra_args)),
      start_timeout_(start_timeout) {
  // "--artifact-dir DIR" among the extra args moves the store (another filesystem, say).
  if (auto it = std::find(extra_.begin(), extra_.end(), "--artifact-dir"); it != extra_.end() && it + 1 != extra_.end()) {
    artifacts_ = *(it + 1);
    extra_.erase(it, it + 2);
  }
  std::filesystem::create_directory(dir_ / "run");
  std::filesystem::permissions(dir_ / "run", std::filesystem::perms::owner_all,
                               std::filesystem::perm_options::replace);
  start();
}

daemon_process::~daemon_process() { kill_hard(); }

void daemon_process::start() {
  if (running()) throw std::logic_error("daemon already running");
  std::vector<std::string> args = {HANDOFFD_PATH,      "--socket",    socket_.string(),
                                   "--artifact-dir",   artifacts_.string(), "--queue-dir",
                                   queue_.string(),    "--log-level", "debug"};
  args.insert(args.end(), extra_.begin(), extra_.end());
  process_.emplace(logged(std::move(args), log_));
  const auto deadline = std::chrono::steady_clock::now() + start_timeout_;
  while (std::chrono::steady_clock::now() < deadline) {
    if (socket_accepts(socket_)) return;
    if (!process_->running()) {
      const int status = process_->status();
      process_.reset();
      throw std::runtime_error("handoffd exited at start (" +
                               (status < 0 ? "signal " + std::to_string(-status) : "status " + std::to_string(status)) +
                               "); log:\n" + log());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  throw std::runtime_error("handoffd did not start listening within " + std::to_string(start_timeout_.count()) +
                           " ms; log:\n" + log());
}

void daemon_process::kill_hard() { process_.reset(); }

int daemon_process::stop() {
  if (!running()) return -1;
  const int status = process_->stop(SIGTERM);
  process_.reset();
  return status;
}

std::string daemon_process::log() const { return read_log(log_); }

}  // namespace handoff::test
