// How a child ended, as a client reports it on subagent/completed and a batch section shows it.
#pragma once

#include <optional>
#include <string_view>

namespace handoff {

enum class result_status {
  done,       // wire "done": the child finished its work
  error,      // wire "error": the child failed (its error text is shown with the result)
  cancelled,  // wire "cancelled": the child was stopped before it finished
};

// The wire word: "done", "error" or "cancelled".
std::string_view to_string(result_status s) noexcept;
// The status a wire word names; nullopt for any other word (case matters).
std::optional<result_status> parse_result_status(std::string_view s) noexcept;

}  // namespace handoff
