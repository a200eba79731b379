#include "cli/harness/gemini/settings.hpp"

#include <algorithm>
#include <string_view>
#include <utility>
#include <vector>

#include "cli/harness/hook_groups.hpp"

namespace handoff::cli::gemini {
namespace {

using nlohmann::ordered_json;

constexpr std::string_view gemini_hook_suffix = " hook gemini";

bool is_gemini_handoff_hook(const ordered_json& hook) {
  if (!hook.is_object() || !hook.contains("command") || !hook["command"].is_string()) return false;
  return hook["command"].get_ref<const std::string&>().ends_with(gemini_hook_suffix);
}

ordered_json gemini_group(const std::string& command, int timeout_ms) {
  return {{"matcher", "invoke_agent"},
          {"hooks", ordered_json::array({{{"type", "command"}, {"name", gemini_hook_name}, {"command", command}, {"timeout", timeout_ms}}})}};
}

// The index among the groups that stay of the first group holding a hook of handoff's; npos
// when there is none.
std::size_t gemini_handoff_position(const ordered_json& groups) {
  if (!groups.is_array()) return std::string::npos;
  std::size_t index = 0;
  for (const ordered_json& group : groups) {
    if (group.is_object() && group.contains("hooks") && group["hooks"].is_array() &&
        std::any_of(group["hooks"].begin(), group["hooks"].end(), is_gemini_handoff_hook))
      return index;
    ++index;
  }
  return std::string::npos;
}

}  // namespace

ordered_json without_gemini_hooks(ordered_json settings) {
  if (!settings.is_object() || !settings.contains("hooks") || !settings["hooks"].is_object()) return settings;
  ordered_json& hooks = settings["hooks"];
  for (const char* event : gemini_events) {
    if (!hooks.contains(event)) continue;
    drop_hooks(hooks[event], is_gemini_handoff_hook);
    if (hooks[event].empty()) hooks.erase(event);
  }
  if (hooks.empty()) settings.erase("hooks");
  return settings;
}

ordered_json with_gemini_hooks(ordered_json settings, const std::string& command) {
  // An earlier install's groups are replaced where they stood; new ones go last.
  std::vector<std::size_t> positions;
  for (const char* event : gemini_events)
    positions.push_back(settings.is_object() && settings.contains("hooks") && settings["hooks"].is_object() &&
                                settings["hooks"].contains(event)
                            ? gemini_handoff_position(settings["hooks"][event])
                            : std::string::npos);
  settings = without_gemini_hooks(std::move(settings));
  if (!settings.contains("hooks")) settings["hooks"] = ordered_json::object();
  ordered_json& hooks = settings["hooks"];
  const int timeouts[] = {gemini_before_timeout_ms, gemini_after_timeout_ms};
  for (std::size_t i = 0; i < std::size(gemini_events); ++i) {
    const char* event = gemini_events[i];
    if (!hooks.contains(event)) hooks[event] = ordered_json::array();
    ordered_json& list = hooks[event];
    ordered_json group = gemini_group(command, timeouts[i]);
    if (positions[i] < list.size())
      list.insert(list.begin() + static_cast<std::ptrdiff_t>(positions[i]), std::move(group));
    else
      list.push_back(std::move(group));
  }
  return settings;
}

}  // namespace handoff::cli::gemini
