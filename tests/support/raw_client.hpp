// A test client that speaks raw wire bytes to the daemon: no library of ours in between, so
// the tests see exactly what any other client would.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace handoff::test {

using json = nlohmann::json;

class raw_client {
 public:
  enum class framing { ndjson, content_length };
  explicit raw_client(const std::filesystem::path& socket, framing f = framing::ndjson);
  ~raw_client();
  raw_client(const raw_client&) = delete;
  raw_client& operator=(const raw_client&) = delete;

  // Writes bytes as they are.
  void send_raw(std::string_view bytes);
  // Frames one JSON value and writes it.
  void send(const json& message);
  // Next frame's payload, or nullopt on timeout / EOF.
  std::optional<std::string> read_frame(std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // Next frame parsed; throws on timeout/EOF.
  json read(std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // Sends a request with a fresh id and returns the response to it (answering nothing else;
  // daemon requests that arrive meanwhile are kept for read()).
  json call(std::string_view method, const json& params,
            std::chrono::milliseconds timeout = std::chrono::seconds(30));
  void notify(std::string_view method, const json& params);
  // True when the daemon closed the connection (EOF) within `timeout`.
  bool closed_within(std::chrono::milliseconds timeout);
  void close();
  int fd() const noexcept { return fd_; }

 private:
  std::optional<std::string> take_frame();
  int fd_ = -1;
  framing framing_;
  std::string buffer_;
  std::vector<json> stash_;  // messages read while waiting for a specific response
  long long next_id_ = 1;
};

// Text with exactly `bytes` bytes and `lines` lines: "BEGIN", numbered lines, "END", padded.
std::string numbered_report(std::size_t bytes, std::size_t lines, const std::string& tag = "");

// Hex SHA-256 of a file's content (via the engine's sha256).
std::string file_sha256(const std::filesystem::path& p);

}  // namespace handoff::test
