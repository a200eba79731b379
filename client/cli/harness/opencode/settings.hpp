// handoff's entry in an opencode config file (`~/.config/opencode/opencode.json`, or a
// project's `opencode.json`), merged into what is there and taken out again exactly.
//
// handoff's entries, and nothing else, are:
//   plugin                               one string: the absolute path of handoff's plugin file
//                                        (plugin.hpp), which setup writes in `handoff/opencode-plugin.js`
//                                        beside the config (`.opencode/handoff/` in a project), never
//                                        in opencode's own plugin/ folder, which it loads by itself
//   permission.external_directory        "<artifact-dir>/*": "allow": opencode's read may read the
//                                        artifact store (outside the project) without asking; one
//                                        rule a store (store_dirs.hpp: the former default too, while
//                                        it exists); only when "permission" and its
//                                        "external_directory" are absent or objects (a single action
//                                        the user chose stands)
// A "plugin" entry is handoff's when it is a string ending in "/handoff/opencode-plugin.js",
// whatever the folder, so installing again replaces it where it stood; a permission rule is
// handoff's when its key is a store's of store_dirs::own (the one named, the default, the former
// default). Everything else is kept as it is, in its order; a
// container handoff leaves empty is taken out. opencode reads its
// config as JSONC, but a file with comments or trailing commas is refused (its comments would be
// lost); so is one whose "plugin" is not a list.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace handoff::cli::opencode {

inline constexpr std::string_view opencode_plugin_file = "handoff/opencode-plugin.js";  // beside the config

// Whether a "plugin" entry is handoff's.
bool is_handoff_plugin_entry(const nlohmann::ordered_json& entry);

// The external_directory rule's key for the store `artifact_dir` (absolute, no trailing '/').
std::string store_rule(const std::string& artifact_dir);

// `config` with handoff's entries: `plugin_path` in its "plugin" list (replacing any earlier
// one), and a read rule for each of `artifact_dirs` (replacing those of `own_dirs`).
nlohmann::ordered_json with_handoff_plugin(nlohmann::ordered_json config, const std::string& plugin_path,
                                           const std::vector<std::string>& artifact_dirs,
                                           const std::vector<std::string>& own_dirs);

// `config` without any entry of handoff's (the rules of `own_dirs`), and without a container
// that leaves empty.
nlohmann::ordered_json without_handoff_plugin(nlohmann::ordered_json config, const std::vector<std::string>& own_dirs);

}  // namespace handoff::cli::opencode
