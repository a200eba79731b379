// What every hook harness's bounding needs to know, read the same way for each: the socket, the
// budgets, and the parent model's context window (docs/design.md §13, "The hook core").
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "protocol/messages.hpp"

namespace handoff::cli::hook_core {

inline constexpr std::size_t max_hook_input_bytes = 80 << 20;  // stdin (or a saved copy) beyond this: passed unbounded

struct hook_settings {
  std::string socket;                               // --socket, else the default
  std::chrono::milliseconds connect_budget{3'000};  // connect (or start) + started + complete, and a lone wait, at most
  // How long a result waits for its siblings (a harness shows the parent none of them before
  // all are done); then it is shared with those that have finished. $HANDOFF_HOOK_SIBLINGS_WAIT_MS.
  std::chrono::milliseconds siblings_wait{25 * 60'000};
  // The parent model's context window, tokens: $HANDOFF_CONTEXT_WINDOW, else what the harness
  // knows (its own variable, its one model family's window); unknown: the static caps apply.
  std::optional<std::int64_t> context_window;
};

// The settings from the environment: $HANDOFF_CONTEXT_WINDOW and $HANDOFF_HOOK_SIBLINGS_WAIT_MS
// (a whole number > 0; anything else is as if unset: a hook never fails its harness over a
// setting), with `socket` from --socket.
hook_settings hook_settings_from_environment(const std::string& socket);

// The parent's context use for a wait: `tokens` against the window; nullopt when either is
// unknown (the static caps apply). Tokens above the window count as the window.
std::optional<rpc::usage_dto> usage_against(std::optional<std::int64_t> tokens, std::optional<std::int64_t> window);

}  // namespace handoff::cli::hook_core
