#include "cli/harness/copilot/settings.hpp"

#include <string_view>
#include <utility>

#include "engine/text/shell_word.hpp"

namespace handoff::cli::copilot {
namespace {

using nlohmann::ordered_json;

constexpr std::string_view copilot_hook_words = " hook copilot";

bool is_copilot_handoff_hook(const ordered_json& hook) {
  if (!hook.is_object() || !hook.contains("bash") || !hook["bash"].is_string()) return false;
  const std::string& bash = hook["bash"].get_ref<const std::string&>();
  if (bash.empty() || bash.front() != '\'') return false;
  const std::size_t at = bash.find(copilot_hook_words);
  if (at == std::string::npos) return false;
  const std::string_view rest = std::string_view(bash).substr(at + copilot_hook_words.size());
  return rest.empty() || rest.starts_with(" --store ");
}

bool has_event(const ordered_json& settings, const char* event) {
  return settings.is_object() && settings.contains("hooks") && settings["hooks"].is_object() &&
         settings["hooks"].contains(event) && settings["hooks"][event].is_array();
}

// The index of handoff's entry among `event`'s hooks; npos when there is none.
std::size_t handoff_position(const ordered_json& settings, const char* event) {
  if (!has_event(settings, event)) return std::string::npos;
  const ordered_json& list = settings["hooks"][event];
  for (std::size_t i = 0; i < list.size(); ++i)
    if (is_copilot_handoff_hook(list[i])) return i;
  return std::string::npos;
}

}  // namespace

ordered_json without_copilot_hooks(ordered_json settings) {
  for (const char* event : copilot_events) {
    if (!has_event(settings, event)) continue;
    ordered_json& hooks = settings["hooks"];
    ordered_json kept = ordered_json::array();
    for (ordered_json& h : hooks[event])
      if (!is_copilot_handoff_hook(h)) kept.push_back(std::move(h));
    hooks[event] = std::move(kept);
    if (hooks[event].empty()) hooks.erase(event);
  }
  if (settings.is_object() && settings.contains("hooks") && settings["hooks"].is_object() && settings["hooks"].empty())
    settings.erase("hooks");
  return settings;
}

ordered_json with_copilot_hooks(ordered_json settings, const std::string& command, const std::vector<std::string>& stores) {
  // An earlier install's entries are replaced where they stood; new ones go last.
  std::vector<std::size_t> positions;
  for (const char* event : copilot_events) positions.push_back(handoff_position(settings, event));
  settings = without_copilot_hooks(std::move(settings));
  if (!settings.contains("hooks")) settings["hooks"] = ordered_json::object();
  ordered_json& hooks = settings["hooks"];
  std::string pre = command;
  for (const std::string& store : stores) {
    pre += " --store ";
    append_shell_word(pre, store);
  }
  const ordered_json entries[] = {
      {{"type", "command"}, {"bash", command}, {"timeoutSec", copilot_stop_timeout_s}},
      {{"type", "command"}, {"bash", pre}, {"timeoutSec", copilot_pre_timeout_s}},
      {{"type", "command"}, {"bash", command}, {"timeoutSec", copilot_failure_timeout_s}},
  };
  for (std::size_t i = 0; i < std::size(copilot_events); ++i) {
    const char* event = copilot_events[i];
    if (!hooks.contains(event)) hooks[event] = ordered_json::array();
    ordered_json& list = hooks[event];
    if (positions[i] < list.size())
      list.insert(list.begin() + static_cast<std::ptrdiff_t>(positions[i]), entries[i]);
    else
      list.push_back(entries[i]);
  }
  return settings;
}

}  // namespace handoff::cli::copilot
