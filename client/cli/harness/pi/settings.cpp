#include "cli/harness/pi/settings.hpp"

#include <cstdlib>
#include <stdexcept>
#include <string_view>

namespace handoff::cli::pi {
namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

constexpr std::string_view bridge_suffix = "/dist/src/pi-subagents-bridge.js";

// A package entry's source: the string, or an object's "source".
std::string source_of(const ordered_json& entry) {
  if (entry.is_string()) return entry.get<std::string>();
  if (entry.is_object() && entry.contains("source") && entry["source"].is_string()) return entry["source"].get<std::string>();
  return {};
}

// Pi's rule (utils/paths.js isLocalPath): anything without a remote prefix is a local path.
bool is_local(std::string_view source) {
  for (std::string_view remote : {"npm:", "git:", "github:", "http:", "https:", "ssh:", "builtin:", "file:"})
    if (source.starts_with(remote)) return false;
  return !source.empty();
}

// A local source as Pi resolves it: "~" is $HOME, a relative path is from `base`.
fs::path resolve_local(const std::string& source, const fs::path& base) {
  if (source == "~" || source.starts_with("~/")) {
    const char* home = std::getenv("HOME");
    return (fs::path(home == nullptr ? "" : home) / source.substr(source.size() > 1 ? 2 : 1)).lexically_normal();
  }
  const fs::path p(source);
  return (p.is_absolute() ? p : base / p).lexically_normal();
}

bool is_handoff_package_entry(const ordered_json& entry, const fs::path& base, const handoff_package_test& is_handoff) {
  const std::string source = source_of(entry);
  if (!is_local(source)) return false;
  fs::path dir = resolve_local(source, base);
  if (dir.has_filename() == false) dir = dir.parent_path();
  return is_handoff(dir);
}

bool is_handoff_bridge(const ordered_json& entry, const fs::path& base, const handoff_package_test& is_handoff) {
  if (!entry.is_string()) return false;
  const std::string& path = entry.get_ref<const std::string&>();
  if (!path.ends_with(bridge_suffix) || !is_local(path)) return false;
  const fs::path file = resolve_local(path, base);
  return is_handoff(file.parent_path().parent_path().parent_path());
}

void erase_matching(ordered_json& settings, const char* key, const std::function<bool(const ordered_json&)>& ours) {
  if (!settings.contains(key)) return;
  ordered_json kept = ordered_json::array();
  bool had = false;
  for (ordered_json& entry : settings[key]) {
    if (ours(entry)) {
      had = true;
    } else {
      kept.push_back(std::move(entry));
    }
  }
  if (had && kept.empty()) {
    settings.erase(key);
  } else {
    settings[key] = std::move(kept);
  }
}

// The source `pi install DIR` writes: DIR relative to the settings' directory ("." for itself).
std::string relative_source(const fs::path& dir, const fs::path& base) {
  const std::string rel = dir.lexically_relative(base).string();
  return rel.empty() ? dir.string() : rel;
}

}  // namespace

void check_pi_shape(const ordered_json& settings, const fs::path& path) {
  for (const char* key : {"packages", "extensions"})
    if (settings.contains(key) && !settings[key].is_array())
      throw std::runtime_error(path.string() + ": \"" + key + "\" is not an array");
}

bool has_pi_subagents(const ordered_json& settings) {
  if (!settings.contains("packages") || !settings["packages"].is_array()) return false;
  for (const ordered_json& entry : settings["packages"]) {
    std::string name = source_of(entry);
    if (name.starts_with("npm:")) name = name.substr(4);
    while (!name.empty() && name.back() == '/') name.pop_back();
    if (const auto slash = name.rfind('/'); slash != std::string::npos) name = name.substr(slash + 1);
    if (const auto at = name.find('@', 1); at != std::string::npos) name = name.substr(0, at);
    if (name.ends_with(".git")) name.resize(name.size() - 4);
    if (name == "pi-subagents") return true;
  }
  return false;
}

fs::path bridge_path(const fs::path& package_dir) { return package_dir / "dist" / "src" / "pi-subagents-bridge.js"; }

namespace {

// Puts `value` into settings[key] where the first entry `ours` took out of `before` stood, or
// last: a reinstall moves nothing.
void put_in_place(ordered_json& settings, const ordered_json& before, const char* key, ordered_json value,
                  const std::function<bool(const ordered_json&)>& ours) {
  auto& list = settings[key];
  if (list.is_null()) list = ordered_json::array();
  std::size_t at = list.size();
  if (before.contains(key))
    for (std::size_t i = 0; i < before[key].size(); ++i)
      if (ours(before[key][i])) {
        at = std::min(i, list.size());
        break;
      }
  list.insert(list.begin() + static_cast<std::ptrdiff_t>(at), std::move(value));
}

}  // namespace

ordered_json pi_with_handoff(ordered_json settings, const pi_entries& entries, const handoff_package_test& is_handoff) {
  const ordered_json before = settings;
  settings = pi_without_handoff(std::move(settings), entries.base, is_handoff);
  put_in_place(settings, before, "packages", relative_source(entries.package_dir, entries.base),
               [&](const ordered_json& e) { return is_handoff_package_entry(e, entries.base, is_handoff); });
  if (entries.bridge)
    put_in_place(settings, before, "extensions", bridge_path(entries.package_dir).string(),
                 [&](const ordered_json& e) { return is_handoff_bridge(e, entries.base, is_handoff); });
  return settings;
}

ordered_json pi_without_handoff(ordered_json settings, const fs::path& base, const handoff_package_test& is_handoff) {
  erase_matching(settings, "packages", [&](const ordered_json& e) { return is_handoff_package_entry(e, base, is_handoff); });
  erase_matching(settings, "extensions", [&](const ordered_json& e) { return is_handoff_bridge(e, base, is_handoff); });
  return settings;
}

}  // namespace handoff::cli::pi
