// A connected Unix stream socket with blocking, deadline-bounded I/O: the fd is non-blocking and
// every wait is a poll() that ends at the caller's deadline. Failures are client_error values
// whose message names the socket path.
#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <optional>
#include <span>
#include <string_view>

namespace handoff::client {

using clock = std::chrono::steady_clock;
// When a blocking operation gives up; nullopt waits for ever.
using deadline = std::optional<clock::time_point>;

// `timeout` from now, or for ever.
deadline deadline_after(std::optional<std::chrono::milliseconds> timeout);

class unix_stream {
 public:
  // Connects to the socket at `path`. Throws client_error: daemon_absent when nothing listens
  // there (ENOENT, ECONNREFUSED, ENOTDIR), refused on EACCES/EPERM or a full backlog, io else.
  static unix_stream connect(const std::filesystem::path& path);

  unix_stream(unix_stream&& other) noexcept;
  unix_stream& operator=(unix_stream&& other) noexcept;
  unix_stream(const unix_stream&) = delete;
  unix_stream& operator=(const unix_stream&) = delete;
  ~unix_stream();

  // Writes every byte. Throws client_error: timeout at the deadline (part may have been
  // written), refused when the daemon has closed the connection, io otherwise.
  void write_all(std::string_view bytes, deadline until);
  // The same for `bytes` then `more`, in one sendmsg when the socket takes both: a frame and its
  // newline in one call, so the daemon reads the frame whole instead of waking for each part.
  void write_all(std::string_view bytes, std::string_view more, deadline until);

  // Reads what is available, at least one byte, into `buffer`. Returns the count, 0 at end of
  // stream (the daemon closed, or reset, the connection), or nullopt when the deadline passed
  // with nothing to read, or `wake_fd` (when not -1) became readable first; bytes waiting on
  // the socket are read before a wake is reported. Throws client_error{io} on other errors.
  // `wait_first`: poll before the first recv, for a read that cannot find anything yet (right
  // after a request was sent: its reply takes a round trip), which saves a recv that fails.
  std::optional<std::size_t> read_some(std::span<char> buffer, deadline until, int wake_fd = -1,
                                       bool wait_first = false);

  const std::filesystem::path& path() const noexcept { return path_; }
  int native_handle() const noexcept { return fd_; }

 private:
  unix_stream(int fd, std::filesystem::path path) noexcept : fd_(fd), path_(std::move(path)) {}
  // Polls for `events` until the deadline; false when it passed, or `wake_fd` (when not -1)
  // became readable, first.
  bool wait_for(short events, deadline until, int wake_fd = -1);
  // After a send failed with `err`: returns once it may be tried again, or throws.
  void after_send_error(int err, deadline until);

  int fd_ = -1;
  std::filesystem::path path_;
};

}  // namespace handoff::client
