#include "cli/harness/opencode/settings.hpp"

#include <algorithm>

namespace handoff::cli::opencode {

using nlohmann::ordered_json;

bool is_handoff_plugin_entry(const ordered_json& entry) {
  return entry.is_string() && entry.get_ref<const std::string&>().ends_with("/" + std::string(opencode_plugin_file));
}

std::string store_rule(const std::string& artifact_dir) { return artifact_dir + "/*"; }

namespace {

// Whether the store's rule has its place: "permission" and its "external_directory" absent or
// objects.
bool rule_has_room(const ordered_json& config) {
  const auto permission = config.find("permission");
  if (permission == config.end()) return true;
  if (!permission->is_object()) return false;
  const auto external = permission->find("external_directory");
  return external == permission->end() || external->is_object();
}

// `config` without the rules of `dirs`, and the containers that leaves empty.
ordered_json without_store_rules(ordered_json config, const std::vector<std::string>& dirs) {
  if (!config.contains("permission") || !config["permission"].is_object()) return config;
  ordered_json& permission = config["permission"];
  if (!permission.contains("external_directory") || !permission["external_directory"].is_object()) return config;
  std::size_t erased = 0;
  for (const std::string& dir : dirs) erased += permission["external_directory"].erase(store_rule(dir));
  if (erased == 0) return config;
  if (permission["external_directory"].empty()) permission.erase("external_directory");
  if (permission.empty()) config.erase("permission");
  return config;
}

}  // namespace

ordered_json with_handoff_plugin(ordered_json config, const std::string& plugin_path,
                                 const std::vector<std::string>& artifact_dirs, const std::vector<std::string>& own_dirs) {
  // Rules of stores no longer allowed go; an allowed store's rule stays where it stood.
  std::vector<std::string> stale;
  for (const std::string& dir : own_dirs)
    if (std::find(artifact_dirs.begin(), artifact_dirs.end(), dir) == artifact_dirs.end()) stale.push_back(dir);
  config = without_store_rules(std::move(config), stale);
  if (rule_has_room(config))
    for (const std::string& dir : artifact_dirs) config["permission"]["external_directory"][store_rule(dir)] = "allow";
  ordered_json& plugins = config["plugin"];
  if (plugins.is_null()) plugins = ordered_json::array();
  const auto mine = std::find_if(plugins.begin(), plugins.end(), is_handoff_plugin_entry);
  if (mine == plugins.end()) {
    plugins.push_back(plugin_path);
    return config;
  }
  *mine = plugin_path;  // where it stood; any second one of handoff's goes
  ordered_json kept = ordered_json::array();
  bool first = true;
  for (const ordered_json& entry : plugins) {
    if (is_handoff_plugin_entry(entry)) {
      if (!first) continue;
      first = false;
    }
    kept.push_back(entry);
  }
  plugins = std::move(kept);
  return config;
}

ordered_json without_handoff_plugin(ordered_json config, const std::vector<std::string>& own_dirs) {
  config = without_store_rules(std::move(config), own_dirs);
  if (!config.contains("plugin") || !config["plugin"].is_array()) return config;
  ordered_json kept = ordered_json::array();
  for (const ordered_json& entry : config["plugin"])
    if (!is_handoff_plugin_entry(entry)) kept.push_back(entry);
  if (kept.size() == config["plugin"].size()) return config;
  if (kept.empty())
    config.erase("plugin");
  else
    config["plugin"] = std::move(kept);
  return config;
}

}  // namespace handoff::cli::opencode
