// Waiting for what handoffd says it holds (`daemon/status`, docs/protocol.md) instead of guessing
// by sleeping that something has happened by now: a wait asleep, a parent known, a queue drained.
#pragma once

#include <chrono>
#include <exception>
#include <filesystem>
#include <thread>

#include <nlohmann/json.hpp>

#include "support/raw_client.hpp"

namespace handoff::test {

// `daemon/status`'s result from the daemon at `socket`, asked on a connection of its own (which
// `connections` counts).
inline nlohmann::json status_at(const std::filesystem::path& socket) {
  raw_client c(socket);
  return c.call("daemon/status", nullptr).at("result");
}

// Polls `daemon/status` until `done(status)` holds: true, or false once `timeout` has passed. A
// status not given (the connection refused, say over --max-connections) counts as not yet.
template <class Predicate>
bool status_becomes(const std::filesystem::path& socket, Predicate done,
                    std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    try {
      if (done(status_at(socket))) return true;
    } catch (const std::exception&) {
      // not answered (yet): poll again
    }
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // the poll interval
  }
}

// True once `count` `subagent/wait` calls are asleep in the daemon (`waits`), within `timeout`.
inline bool waits_asleep(const std::filesystem::path& socket, int count,
                         std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
  return status_becomes(socket, [count](const nlohmann::json& s) { return s.at("waits") == count; }, timeout);
}

}  // namespace handoff::test
