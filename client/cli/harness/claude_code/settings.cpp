#include "cli/harness/claude_code/settings.hpp"

#include <algorithm>
#include <string_view>
#include <utility>
#include <vector>

#include "cli/harness/hook_groups.hpp"

namespace handoff::cli::claude_code {
namespace {

using nlohmann::ordered_json;

constexpr std::string_view hook_suffix = " hook claude-code";
constexpr std::string_view deliver_suffix = " hook claude-code --deliver";
constexpr std::string_view store_suffix = "/subagent-results/**)";

bool is_handoff_hook(const ordered_json& hook) {
  if (!hook.is_object() || !hook.contains("command") || !hook["command"].is_string()) return false;
  const std::string& command = hook["command"].get_ref<const std::string&>();
  return command.ends_with(hook_suffix) || command.ends_with(deliver_suffix);
}

ordered_json command_hook(const std::string& command, int timeout_s) {
  return {{"type", "command"}, {"command", command}, {"timeout", timeout_s}};
}

// handoff's matcher group for each event (settings.hpp).
std::vector<std::pair<const char*, ordered_json>> handoff_groups(const claude_code_entries& e) {
  ordered_json deliver = command_hook(e.command + " --deliver", deliver_timeout_s);
  deliver["asyncRewake"] = true;
  deliver["rewakeMessage"] = std::string(rewake_message);
  deliver["rewakeSummary"] = std::string(rewake_summary);
  const auto group = [](const char* matcher, ordered_json hooks) {
    ordered_json g = ordered_json::object();
    if (matcher != nullptr) g["matcher"] = matcher;
    g["hooks"] = std::move(hooks);
    return g;
  };
  return {
      {"PostToolUse", group("Agent", {command_hook(e.command, hook_timeout_s)})},
      {"PostToolUseFailure", group("Agent", {command_hook(e.command, hook_timeout_s)})},
      {"PreToolUse", group("Agent|SubagentHandback", {command_hook(e.command, capture_timeout_s)})},
      {"SubagentStop", group(nullptr, {command_hook(e.command, capture_timeout_s)})},
      {"UserPromptSubmit", group(nullptr, {command_hook(e.command, capture_timeout_s), deliver})},
  };
}

// Where handoff's group of `event` stood: the index of the first group holding a hook of
// handoff's, counted among the groups that stay; npos when there is none.
std::size_t handoff_position(const ordered_json& groups) {
  if (!groups.is_array()) return std::string::npos;
  std::size_t staying = 0;
  for (const ordered_json& group : groups) {
    if (!group.is_object() || !group.contains("hooks") || !group["hooks"].is_array()) {
      ++staying;
      continue;
    }
    const ordered_json& hooks = group["hooks"];
    const std::size_t mine = static_cast<std::size_t>(std::count_if(hooks.begin(), hooks.end(), is_handoff_hook));
    if (mine > 0) return staying;
    ++staying;
  }
  return std::string::npos;
}

bool is_handoff_rule(const ordered_json& rule, const std::vector<std::string>& own) {
  if (!rule.is_string()) return false;
  const std::string& r = rule.get_ref<const std::string&>();
  return std::find(own.begin(), own.end(), r) != own.end() || (r.starts_with("Read(/") && r.ends_with(store_suffix));
}

void erase_if_empty(ordered_json& object, const char* key) {
  if (object.is_object() && object.contains(key) && object[key].empty()) object.erase(key);
}

}  // namespace

std::string read_rule(const std::string& artifact_dir) {
  // Claude Code's rule for an absolute path starts with "//": "Read(//home/u/...)".
  return "Read(/" + artifact_dir + "/**)";
}

ordered_json without_handoff(ordered_json settings, const std::vector<std::string>& artifact_dirs) {
  std::vector<std::string> own;
  for (const std::string& dir : artifact_dirs) own.push_back(read_rule(dir));
  if (!settings.is_object()) return settings;
  if (settings.contains("hooks") && settings["hooks"].is_object()) {
    ordered_json& hooks = settings["hooks"];
    for (const char* event : handoff_events) {
      if (!hooks.contains(event)) continue;
      drop_hooks(hooks[event], is_handoff_hook);
      erase_if_empty(hooks, event);
    }
    erase_if_empty(settings, "hooks");
  }
  if (settings.contains("permissions") && settings["permissions"].is_object()) {
    ordered_json& permissions = settings["permissions"];
    if (permissions.contains("allow") && permissions["allow"].is_array()) {
      ordered_json kept = ordered_json::array();
      for (ordered_json& rule : permissions["allow"])
        if (!is_handoff_rule(rule, own)) kept.push_back(std::move(rule));
      permissions["allow"] = std::move(kept);
      erase_if_empty(permissions, "allow");
    }
    erase_if_empty(settings, "permissions");
  }
  return settings;
}

ordered_json with_handoff(ordered_json settings, const claude_code_entries& entries) {
  // An earlier install's groups are replaced where they stood; new ones go last.
  std::vector<std::size_t> positions;
  const auto groups = handoff_groups(entries);
  for (const auto& [event, group] : groups)
    positions.push_back(settings.is_object() && settings.contains("hooks") && settings["hooks"].is_object() &&
                                settings["hooks"].contains(event)
                            ? handoff_position(settings["hooks"][event])
                            : std::string::npos);
  std::vector<std::string> own = entries.own_artifact_dirs;
  own.insert(own.end(), entries.artifact_dirs.begin(), entries.artifact_dirs.end());
  settings = without_handoff(std::move(settings), own);
  if (!settings.contains("hooks")) settings["hooks"] = ordered_json::object();
  ordered_json& hooks = settings["hooks"];
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const auto& [event, group] = groups[i];
    if (!hooks.contains(event)) hooks[event] = ordered_json::array();
    ordered_json& list = hooks[event];
    if (positions[i] < list.size())
      list.insert(list.begin() + static_cast<std::ptrdiff_t>(positions[i]), group);
    else
      list.push_back(group);
  }
  if (!settings.contains("permissions")) settings["permissions"] = ordered_json::object();
  ordered_json& permissions = settings["permissions"];
  if (!permissions.contains("allow")) permissions["allow"] = ordered_json::array();
  for (const std::string& dir : entries.artifact_dirs) permissions["allow"].push_back(read_rule(dir));
  return settings;
}

}  // namespace handoff::cli::claude_code
