#include "cli/harness/core/hook_settings.hpp"

#include <algorithm>

#include "cli/harness/hook_input.hpp"

namespace handoff::cli::hook_core {

hook_settings hook_settings_from_environment(const std::string& socket) {
  hook_settings settings;
  settings.socket = socket;
  settings.context_window = positive_env("HANDOFF_CONTEXT_WINDOW");
  if (const auto ms = positive_env("HANDOFF_HOOK_SIBLINGS_WAIT_MS")) settings.siblings_wait = std::chrono::milliseconds(*ms);
  return settings;
}

std::optional<rpc::usage_dto> usage_against(std::optional<std::int64_t> tokens, std::optional<std::int64_t> window) {
  if (!tokens || !window || *window <= 0) return std::nullopt;
  rpc::usage_dto usage;
  usage.context_window = *window;
  usage.tokens = std::clamp<std::int64_t>(*tokens, 0, *window);
  usage.percent = 100.0 * static_cast<double>(*usage.tokens) / static_cast<double>(*window);
  return usage;
}

}  // namespace handoff::cli::hook_core
