#include "handoff/client_error.hpp"

namespace handoff::client {

std::string_view to_string(error_kind kind) noexcept {
  switch (kind) {
    case error_kind::daemon_absent: return "daemon_absent";
    case error_kind::refused: return "refused";
    case error_kind::timeout: return "timeout";
    case error_kind::protocol: return "protocol";
    case error_kind::rpc: return "rpc";
    case error_kind::io: return "io";
  }
  return "unknown";
}

client_error::client_error(error_kind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}

client_error::client_error(rpc::errc code, const std::string& message, nlohmann::json data)
    : std::runtime_error(message), kind_(error_kind::rpc), code_(code), data_(std::move(data)) {}

}  // namespace handoff::client
