// What the end-to-end, load and memory benchmarks share: deterministic report texts, latency
// samples with percentiles, a markdown table, and a tiny Unix-socket peer for the floors.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace handoff::bench {

using bench_clock = std::chrono::steady_clock;

// A subagent-like final report of exactly `bytes` bytes (ASCII markdown: headings, bullets,
// file paths, quotes, a tab now and then, so JSON escaping has work to do), different for every
// `seed` from its first line on, and the same for the same arguments.
std::string report_text(std::size_t bytes, std::uint64_t seed);

// The i-th value of a fixed pseudo-random sequence (splitmix64), for deterministic mixes.
std::uint64_t mix(std::uint64_t i) noexcept;

// Latencies of one case, microseconds.
class samples {
 public:
  void add(bench_clock::duration d) {
    us_.push_back(std::chrono::duration<double, std::micro>(d).count());
  }
  void merge(const samples& other) { us_.insert(us_.end(), other.us_.begin(), other.us_.end()); }
  std::size_t size() const noexcept { return us_.size(); }
  // The q-quantile (0..1) by nearest rank; 0 when empty.
  double quantile(double q) const;
  double p50() const { return quantile(0.50); }
  double p99() const { return quantile(0.99); }

 private:
  std::vector<double> us_;
};

// Times `f` once.
template <class F>
bench_clock::duration time_once(F&& f) {
  const auto start = bench_clock::now();
  f();
  return bench_clock::now() - start;
}

// "812 us", "3.41 ms", "1.20 s".
std::string format_us(double us);
// "2.4x".
std::string format_ratio(double r);
// "12.3 MiB" from KiB.
std::string format_mib(std::size_t kib);

// The median of `values` (the mean of the middle two when their count is even); 0 when empty.
double median(std::vector<double> values);
// "37 KiB", "1 MiB", "612 B".
std::string format_bytes(std::size_t bytes);

// A markdown table printed to stdout: header first, then rows of the same width.
void print_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows);

// Facts printed above every benchmark's tables: the disk the daemon writes to, the load.
void print_environment(const std::filesystem::path& data_dir, const std::filesystem::path& handoffd);

// A server on a Unix socket at `path` that accepts one connection and calls `serve` with its
// fd until it returns false (or the peer leaves). For ping-pong and sink floors. It runs as a
// thread of this process, or as a child process (forked: a server as separate from its client
// as handoffd is, with its own address space; `serve` then works on the child's copy).
class unix_peer {
 public:
  enum class runs_as { thread, process };
  unix_peer(std::filesystem::path path, std::function<bool(int fd)> serve, runs_as how = runs_as::thread);
  ~unix_peer();  // closes the listening socket and joins the thread or reaps the child
  unix_peer(const unix_peer&) = delete;
  unix_peer& operator=(const unix_peer&) = delete;
  const std::filesystem::path& path() const noexcept { return path_; }

 private:
  std::filesystem::path path_;
  int listen_fd_ = -1;
  std::thread thread_;
  pid_t child_ = -1;
};

// Blocking helpers on a connected socket fd; they throw std::system_error on failure and
// std::runtime_error at end of stream.
int connect_unix(const std::filesystem::path& path);
void write_all(int fd, std::string_view bytes);
void read_exactly(int fd, char* out, std::size_t n);
// Reads up to and including the next '\n' into `out` (replacing it), using `buffer` for bytes
// read past it; returns false at end of stream before any byte.
bool read_line(int fd, std::string& buffer, std::string& out);

}  // namespace handoff::bench
