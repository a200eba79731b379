#include "engine/text/result_status.hpp"

namespace handoff {

std::string_view to_string(result_status s) noexcept {
  switch (s) {
    case result_status::done: return "done";
    case result_status::error: return "error";
    case result_status::cancelled: return "cancelled";
  }
  return "done";
}

std::optional<result_status> parse_result_status(std::string_view s) noexcept {
  if (s == "done") return result_status::done;
  if (s == "error") return result_status::error;
  if (s == "cancelled") return result_status::cancelled;
  return std::nullopt;
}

}  // namespace handoff
