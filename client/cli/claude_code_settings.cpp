#include "cli/claude_code_settings.hpp"

#include <string_view>

namespace handoff::cli {
namespace {

using nlohmann::ordered_json;

constexpr std::string_view hook_suffix = " hook claude-code";
constexpr std::string_view store_suffix = "/subagent-results/**)";
constexpr const char* events[] = {"PostToolUse", "PostToolUseFailure", "PreToolUse"};

bool is_handoff_hook(const ordered_json& hook) {
  return hook.is_object() && hook.contains("command") && hook["command"].is_string() &&
         hook["command"].get_ref<const std::string&>().ends_with(hook_suffix);
}

bool is_handoff_rule(const ordered_json& rule, std::string_view own) {
  if (!rule.is_string()) return false;
  const std::string& r = rule.get_ref<const std::string&>();
  return r == own || (r.starts_with("Read(/") && r.ends_with(store_suffix));
}

// Removes handoff's hooks from one event's list of matcher groups, and groups left empty.
void drop_hooks(ordered_json& groups) {
  if (!groups.is_array()) return;
  ordered_json kept = ordered_json::array();
  for (ordered_json& group : groups) {
    if (group.is_object() && group.contains("hooks") && group["hooks"].is_array()) {
      ordered_json hooks = ordered_json::array();
      bool had = false;
      for (ordered_json& h : group["hooks"]) {
        if (is_handoff_hook(h)) {
          had = true;
        } else {
          hooks.push_back(std::move(h));
        }
      }
      if (had && hooks.empty()) continue;
      group["hooks"] = std::move(hooks);
    }
    kept.push_back(std::move(group));
  }
  groups = std::move(kept);
}

void erase_if_empty(ordered_json& object, const char* key) {
  if (object.is_object() && object.contains(key) && object[key].empty()) object.erase(key);
}

}  // namespace

std::string read_rule(const std::string& artifact_dir) {
  // Claude Code's rule for an absolute path starts with "//": "Read(//home/u/...)".
  return "Read(/" + artifact_dir + "/**)";
}

ordered_json without_handoff(ordered_json settings, const std::string& artifact_dir) {
  const std::string own = read_rule(artifact_dir);
  if (!settings.is_object()) return settings;
  if (settings.contains("hooks") && settings["hooks"].is_object()) {
    ordered_json& hooks = settings["hooks"];
    for (const char* event : events) {
      if (!hooks.contains(event)) continue;
      drop_hooks(hooks[event]);
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
  settings = without_handoff(std::move(settings), entries.artifact_dir);
  const ordered_json group = {
      {"matcher", "Agent"},
      {"hooks", ordered_json::array({{{"type", "command"}, {"command", entries.command}, {"timeout", hook_timeout_s}}})}};
  if (!settings.contains("hooks")) settings["hooks"] = ordered_json::object();
  ordered_json& hooks = settings["hooks"];
  for (const char* event : events) {
    if (std::string_view(event) == "PreToolUse" && !entries.foreground_agents) continue;
    if (!hooks.contains(event)) hooks[event] = ordered_json::array();
    hooks[event].push_back(group);
  }
  if (!settings.contains("permissions")) settings["permissions"] = ordered_json::object();
  ordered_json& permissions = settings["permissions"];
  if (!permissions.contains("allow")) permissions["allow"] = ordered_json::array();
  permissions["allow"].push_back(read_rule(entries.artifact_dir));
  return settings;
}

}  // namespace handoff::cli
