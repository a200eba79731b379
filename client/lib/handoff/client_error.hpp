// The one exception the client library throws, with a kind a caller can branch on (the CLI
// maps kinds to exit codes) and a message a person can act on.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "protocol/jsonrpc.hpp"

namespace handoff::client {

enum class error_kind {
  daemon_absent,  // nothing listens at the socket (ENOENT, ECONNREFUSED)
  refused,        // the daemon would not talk to us: EACCES, connection cap, closed on us; or
                  // the private fallback's directory is not safe to dial in
  timeout,        // no reply within the call's timeout; the connection's state is unknown
  protocol,       // the daemon's bytes were not a well-formed reply (a bug on one side)
  rpc,            // the daemon answered with a JSON-RPC error: see code() and data()
  io,             // any other system error on the socket (path too long, EPIPE, ...)
};

// "daemon_absent", "refused", ...
std::string_view to_string(error_kind kind) noexcept;

class client_error : public std::runtime_error {
 public:
  client_error(error_kind kind, const std::string& message);
  // A JSON-RPC error reply: kind rpc, the daemon's code, message and data.
  client_error(rpc::errc code, const std::string& message, nlohmann::json data = nullptr);

  error_kind kind() const noexcept { return kind_; }
  // The JSON-RPC code when kind() == rpc (codes this build does not name still round-trip).
  rpc::errc code() const noexcept { return code_; }
  // The error's `data` member when kind() == rpc; null otherwise.
  const nlohmann::json& data() const noexcept { return data_; }

 private:
  error_kind kind_;
  rpc::errc code_ = rpc::errc::internal_error;
  nlohmann::json data_;
};

}  // namespace handoff::client
