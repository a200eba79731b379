// Concurrent clients against a benchmarked handoffd: N threads, one connection each, started
// together behind a barrier, each call timed. Shared by the load and recovery benchmarks.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <mutex>
#include <string>

#include "e2e_support.hpp"
#include "handoff/client.hpp"
#include "result_mix.hpp"

namespace handoff::bench {

// What one phase of concurrent calls did: its wall time, the results it handled, each call's
// latency.
struct phase {
  double seconds = 0;
  std::size_t count = 0;
  samples latency;
  std::mutex mutex;
};

// The work of client `t` (0..clients-1) on its own connection: adds one latency per call to
// `latency` and returns the results it handled. Throws on any failure.
using client_work = std::function<std::size_t(std::size_t t, client::connection& c, samples& latency)>;

// Runs `work` on `clients` connections to `socket` at once and fills `out` (the wall time from
// the moment all are connected until the last is done). Throws std::runtime_error, after every
// client has stopped, when any of them failed (each failure is printed to stderr).
void run_clients(const std::filesystem::path& socket, std::size_t clients, phase& out, const client_work& work);

// Completes results 0..count-1 of `mix` (client t sends t, t + clients, ...; the final text of
// result i is text_of(i)) and fills `out`. Throws when the daemon refuses a completion or takes
// one as a duplicate of an earlier one (each result of a run is new).
void complete_results(const std::filesystem::path& socket, std::size_t clients, const result_mix& mix,
                      std::size_t count, const std::function<std::string(std::size_t)>& text_of, phase& out);

// Throws, naming `when`, unless daemon/status says the queue holds exactly `expected` results.
void expect_held(const std::filesystem::path& socket, std::size_t expected, const std::string& when);

}  // namespace handoff::bench
