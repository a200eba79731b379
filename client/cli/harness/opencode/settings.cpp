#include "cli/harness/opencode/settings.hpp"

#include <algorithm>

namespace handoff::cli {

using nlohmann::ordered_json;

bool is_handoff_plugin_entry(const ordered_json& entry) {
  return entry.is_string() && entry.get_ref<const std::string&>().ends_with("/" + std::string(opencode_plugin_file));
}

ordered_json with_handoff_plugin(ordered_json config, const std::string& plugin_path) {
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

ordered_json without_handoff_plugin(ordered_json config) {
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

}  // namespace handoff::cli
