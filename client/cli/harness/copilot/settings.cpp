#include "cli/harness/copilot/settings.hpp"

#include <string_view>
#include <utility>

namespace handoff::cli::copilot {
namespace {

using nlohmann::ordered_json;

constexpr std::string_view copilot_hook_suffix = " hook copilot";

bool is_copilot_handoff_hook(const ordered_json& hook) {
  if (!hook.is_object() || !hook.contains("bash") || !hook["bash"].is_string()) return false;
  return hook["bash"].get_ref<const std::string&>().ends_with(copilot_hook_suffix);
}

bool has_hooks(const ordered_json& settings) {
  return settings.is_object() && settings.contains("hooks") && settings["hooks"].is_object() &&
         settings["hooks"].contains(copilot_event) && settings["hooks"][copilot_event].is_array();
}

}  // namespace

ordered_json without_copilot_hook(ordered_json settings) {
  if (!has_hooks(settings)) return settings;
  ordered_json& hooks = settings["hooks"];
  ordered_json kept = ordered_json::array();
  for (ordered_json& h : hooks[copilot_event])
    if (!is_copilot_handoff_hook(h)) kept.push_back(std::move(h));
  hooks[copilot_event] = std::move(kept);
  if (hooks[copilot_event].empty()) hooks.erase(copilot_event);
  if (hooks.empty()) settings.erase("hooks");
  return settings;
}

ordered_json with_copilot_hook(ordered_json settings, const std::string& command) {
  // An earlier install's entry is replaced where it stood; a new one goes last.
  std::size_t position = std::string::npos;
  if (has_hooks(settings)) {
    const ordered_json& list = settings["hooks"][copilot_event];
    for (std::size_t i = 0; i < list.size(); ++i)
      if (is_copilot_handoff_hook(list[i])) {
        position = i;
        break;
      }
  }
  settings = without_copilot_hook(std::move(settings));
  if (!settings.contains("hooks")) settings["hooks"] = ordered_json::object();
  ordered_json& hooks = settings["hooks"];
  if (!hooks.contains(copilot_event)) hooks[copilot_event] = ordered_json::array();
  ordered_json& list = hooks[copilot_event];
  ordered_json entry = {{"type", "command"}, {"bash", command}, {"timeoutSec", copilot_hook_timeout_s}};
  if (position < list.size())
    list.insert(list.begin() + static_cast<std::ptrdiff_t>(position), std::move(entry));
  else
    list.push_back(std::move(entry));
  return settings;
}

}  // namespace handoff::cli::copilot
