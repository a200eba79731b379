// handoff's entry in an opencode config file (`~/.config/opencode/opencode.json`, or a
// project's `opencode.json`), merged into what is there and taken out again exactly.
//
// handoff's entry, and nothing else, is one string in the top-level "plugin" list: the absolute
// path of handoff's plugin file (plugin.hpp), which setup writes beside the config, in
// `handoff/opencode-plugin.js` (never in opencode's own plugin/ folder, which opencode loads by
// itself). A "plugin" entry is handoff's when it is a string ending in "/handoff/opencode-plugin.js",
// whatever the folder, so installing again replaces it where it stood. Everything else is kept as
// it is, in its order; a "plugin" list handoff leaves empty is taken out. opencode reads its
// config as JSONC, but a file with comments or trailing commas is refused (its comments would be
// lost); so is one whose "plugin" is not a list.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace handoff::cli {

inline constexpr std::string_view opencode_plugin_file = "handoff/opencode-plugin.js";  // beside the config

// Whether a "plugin" entry is handoff's.
bool is_handoff_plugin_entry(const nlohmann::ordered_json& entry);

// `config` with handoff's entry `plugin_path` in its "plugin" list (replacing any earlier one).
nlohmann::ordered_json with_handoff_plugin(nlohmann::ordered_json config, const std::string& plugin_path);

// `config` without any entry of handoff's (and without a "plugin" list that leaves empty).
nlohmann::ordered_json without_handoff_plugin(nlohmann::ordered_json config);

}  // namespace handoff::cli
