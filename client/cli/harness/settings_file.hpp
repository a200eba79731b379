// A harness's JSON settings file, edited by `handoff setup`: read without following a symlink
// (at most 16 MiB), parsed keeping its members' order, changed by the caller, and replaced
// atomically with its mode kept, or only printed (--dry-run). The same checks and messages for
// every harness.
#pragma once

#include <filesystem>
#include <functional>
#include <string_view>

#include <nlohmann/json.hpp>

namespace handoff::cli {

struct settings_edit {
  std::string_view target;       // "claude-code", "pi": messages say "setup <target>: ..."
  std::filesystem::path path;    // the settings file
  bool remove = false;           // taking handoff's entries out (a missing file: nothing to do)
  bool dry_run = false;          // print the file as it would be, change nothing
};

// The file's object (an absent or blank file: {}), given to `check` (throws std::runtime_error
// for a shape handoff does not edit) and then to `change`; writes the result when it differs.
// Prints what it did (or would do) on stdout. Throws std::runtime_error (invalid JSON, a
// symlink, not a regular file...) and fs_error; the file is untouched then.
void edit_settings(const settings_edit& edit, const std::function<void(const nlohmann::ordered_json&)>& check,
                   const std::function<nlohmann::ordered_json(nlohmann::ordered_json)>& change);

}  // namespace handoff::cli
