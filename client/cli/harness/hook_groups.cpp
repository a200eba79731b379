#include "cli/harness/hook_groups.hpp"

#include <stdexcept>
#include <string>
#include <utility>

namespace handoff::cli {

void check_hooks_shape(const nlohmann::ordered_json& settings, std::span<const char* const> events,
                       const std::filesystem::path& path) {
  if (!settings.contains("hooks")) return;
  const std::string where = path.string() + ": ";
  const nlohmann::ordered_json& hooks = settings["hooks"];
  if (!hooks.is_object()) throw std::runtime_error(where + "\"hooks\" is not an object");
  for (const char* event : events)
    if (hooks.contains(event) && !hooks[event].is_array())
      throw std::runtime_error(where + "\"hooks." + event + "\" is not an array");
}

void drop_hooks(nlohmann::ordered_json& groups, const std::function<bool(const nlohmann::ordered_json&)>& ours) {
  if (!groups.is_array()) return;
  nlohmann::ordered_json kept = nlohmann::ordered_json::array();
  for (nlohmann::ordered_json& group : groups) {
    if (group.is_object() && group.contains("hooks") && group["hooks"].is_array()) {
      nlohmann::ordered_json hooks = nlohmann::ordered_json::array();
      bool had = false;
      for (nlohmann::ordered_json& h : group["hooks"]) {
        if (ours(h)) {
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

}  // namespace handoff::cli
