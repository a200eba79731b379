// A harness's settings file, edited by `handoff setup`: read without following a symlink (at
// most 16 MiB), changed by the caller, and replaced atomically with its mode kept, or only
// printed (--dry-run), or only checked (--check). The same checks and messages for every harness: as text
// (edit_settings_text: Codex's TOML) or as JSON kept in its members' order (edit_settings).
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "cli/harness/setup_report.hpp"

namespace handoff::cli {

struct settings_edit {
  std::string_view target;       // "claude-code", "pi": messages say "setup <target>: ..."
  std::filesystem::path path;    // the settings file
  bool remove = false;           // taking handoff's entries out (a missing file: nothing to do)
  setup_mode mode = setup_mode::write;
  setup_report* report = nullptr;  // where a check's finding goes; required in setup_mode::check
};

// The file's text (nullopt: it does not exist) given to `change`, which returns the text to
// write, or nullopt when there is nothing to change; writes it (or only prints it). Prints what
// it did (or would do) on stdout; a check only reports whether it would change the file. Throws std::runtime_error (from `change`, a symlink, not a
// regular file, over 16 MiB...) and fs_error; the file is untouched then.
void edit_settings_text(const settings_edit& edit,
                        const std::function<std::optional<std::string>(const std::optional<std::string>&)>& change);

// The file's object (an absent or blank file: {}), given to `check` (throws std::runtime_error
// for a shape handoff does not edit) and then to `change`; writes the result when it differs.
// Prints (or reports) as edit_settings_text does. Throws std::runtime_error (invalid JSON, a
// symlink, not a regular file...) and fs_error; the file is untouched then.
void edit_settings(const settings_edit& edit, const std::function<void(const nlohmann::ordered_json&)>& check,
                   const std::function<nlohmann::ordered_json(nlohmann::ordered_json)>& change);

}  // namespace handoff::cli
