// handoff's entries in Pi's settings file (`${PI_CODING_AGENT_DIR:-~/.pi/agent}/settings.json`,
// or a project's `.pi/settings.json`), put in and taken out again exactly.
//
// handoff's entries, and nothing else, are:
//   packages    the @handoff/pi package, as `pi install DIR` writes it: DIR relative to the
//               settings file's directory (Pi resolves a local package from there)
//   extensions  the pi-subagents bridge (DIR/dist/src/pi-subagents-bridge.js, absolute), only
//               when pi-subagents is among the packages
// A package entry is handoff's when it is a local path (a string, or an object's "source") to a
// directory whose package.json is named "@handoff/pi", wherever it is, so installing from
// another place replaces it; an extension entry when it is such a package's bridge. Everything
// else is kept as it is, in its order. Installing twice is installing once.
#pragma once

#include <filesystem>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

namespace handoff::cli::pi {

// Whether the directory `dir` (absolute) holds the @handoff/pi package.
using handoff_package_test = std::function<bool(const std::filesystem::path& dir)>;

struct pi_entries {
  std::filesystem::path base;         // the settings file's directory: relative sources resolve from it
  std::filesystem::path package_dir;  // the package to register, absolute
  bool bridge = false;                // also the pi-subagents bridge of package_dir
};

// Throws std::runtime_error for "packages" or "extensions" that are not arrays.
void check_pi_shape(const nlohmann::ordered_json& settings, const std::filesystem::path& path);
// True when "packages" holds pi-subagents (npm:pi-subagents@..., a git URL or a path ending in it).
bool has_pi_subagents(const nlohmann::ordered_json& settings);
// `settings` with handoff's entries put in (replacing any earlier ones of handoff's).
nlohmann::ordered_json pi_with_handoff(nlohmann::ordered_json settings, const pi_entries& entries,
                                       const handoff_package_test& is_handoff);
// `settings` with every entry of handoff's taken out; an array left empty goes too.
nlohmann::ordered_json pi_without_handoff(nlohmann::ordered_json settings, const std::filesystem::path& base,
                                          const handoff_package_test& is_handoff);
// The bridge extension's path in `package_dir`.
std::filesystem::path bridge_path(const std::filesystem::path& package_dir);

}  // namespace handoff::cli::pi
