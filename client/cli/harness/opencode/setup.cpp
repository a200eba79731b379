// `handoff setup opencode [--project DIR] [--dry-run] [--remove]`: handoff's plugin file and its
// entry in opencode.json (settings.hpp, plugin.hpp). `handoff setup kilo` is the same for Kilo
// Code's CLI, an opencode fork that loads the same plugin: its user config is in
// ${XDG_CONFIG_HOME:-~/.config}/kilo/, and it reads kilo.jsonc, kilo.json, opencode.jsonc and
// opencode.json there and in a project (docs/opencode.md, "Kilo Code").
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <string>

#include "cli/harness/opencode/entry.hpp"
#include "cli/harness/opencode/plugin.hpp"
#include "cli/harness/opencode/settings.hpp"
#include "cli/harness/settings_file.hpp"
#include "cli/harness/store_dirs.hpp"
#include "protocol/default_paths.hpp"

namespace handoff::cli::opencode {
namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

// opencode, or a fork of it that loads its plugins the same way.
struct fork {
  std::string_view name;                   // "setup NAME: ..."
  std::string_view config_dir;             // its folder under ${XDG_CONFIG_HOME:-~/.config}
  std::vector<std::string_view> configs;   // the config files it reads there: the first that exists is edited
  std::string_view new_config;             // the one made when none exists
};

const fork opencode_fork{"opencode", "opencode", {"opencode.json"}, "opencode.json"};
// Kilo 7.7.9 loads the plugin from any of these (measured: kilo.json, kilo.jsonc, opencode.json).
const fork kilo_fork{"kilo", "kilo", {"kilo.jsonc", "kilo.json", "opencode.jsonc", "opencode.json"}, "kilo.json"};

struct opencode_options : setup_flags {
  const fork* harness = &opencode_fork;
  std::string project;       // --project DIR: DIR's config instead of the user's
  std::string artifact_dir;  // --artifact-dir: the store its read may read [handoffd's default]
};

struct opencode_paths {
  fs::path config;               // the config file handoff's entries go in
  std::vector<fs::path> others;  // the fork's other config files there: handoff's entries taken out
  fs::path plugin;               // handoff's plugin file
};

// The fork's config files in `dir`: the first that exists (or a symlink, which edit_settings
// refuses), else its new one; the rest are `others`.
void choose_config(opencode_paths& paths, const fork& harness, const fs::path& dir) {
  std::error_code ec;
  for (const std::string_view name : harness.configs) {
    const fs::path path = dir / name;
    if (paths.config.empty() && fs::symlink_status(path, ec).type() != fs::file_type::not_found) paths.config = path;
    else paths.others.push_back(path);
  }
  if (paths.config.empty()) {
    paths.config = dir / harness.new_config;
    std::erase(paths.others, paths.config);
  }
}

void check_opencode_shape(const ordered_json& config, const fs::path& path) {
  if (config.contains("plugin") && !config["plugin"].is_array())
    throw std::runtime_error(path.string() + ": \"plugin\" is not a list");
}

// Before anything is written: a config opencode reads as JSONC but handoff cannot rewrite without
// losing what it holds (comments, trailing commas) is refused, and so is a "plugin" that is not a
// list, and so is invalid JSON. A symlink or another kind of file is left to edit_settings, which
// says why.
void precheck_config(const fs::path& path) {
  std::error_code ec;
  if (fs::is_symlink(path, ec) || !fs::is_regular_file(path, ec)) return;
  std::ifstream in(path, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) return;
  const ordered_json config = ordered_json::parse(text, nullptr, false);
  if (config.is_discarded()) {
    if (!ordered_json::parse(text, nullptr, false, true).is_discarded())
      throw std::runtime_error(path.string() +
                               " has comments (JSONC, which opencode accepts); handoff does not rewrite it, so as not "
                               "to lose them: nothing was changed");
    throw std::runtime_error(path.string() + " is not valid JSON; fix it first (nothing was changed)");
  }
  if (config.is_object()) check_opencode_shape(config, path);
}

bool is_handoff_plugin_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::string first;
  std::getline(in, first);
  return first.starts_with(opencode_plugin_marker);
}

void write_plugin(const opencode_paths& paths, const opencode_options& options, setup_report& report) {
  const fs::path self = rpc::own_executable();
  const std::string source = opencode_plugin_source(self.empty() ? std::string("handoff") : self.string());
  edit_settings_text({options.harness->name, paths.plugin, false, options.mode, &report},
                     [&](const std::optional<std::string>& before) -> std::optional<std::string> {
                       if (before && !before->starts_with(opencode_plugin_marker))
                         throw std::runtime_error(paths.plugin.string() + " exists and is not handoff's plugin");
                       if (before == source) return std::nullopt;
                       return source;
                     });
}

void remove_plugin(const opencode_paths& paths, const opencode_options& options) {
  struct stat st {};
  if (::lstat(paths.plugin.c_str(), &st) != 0) return;
  if (!S_ISREG(st.st_mode))
    throw std::runtime_error(paths.plugin.string() + " is not a regular file; handoff removes only its own plugin");
  if (!is_handoff_plugin_file(paths.plugin))
    throw std::runtime_error(paths.plugin.string() + " is not handoff's plugin; left as it is");
  if (options.mode != setup_mode::write) {  // --dry-run (a check never removes: --check excludes --remove)
    std::printf("setup %.*s: would remove %s\n", static_cast<int>(options.harness->name.size()),
                options.harness->name.data(), paths.plugin.c_str());
    return;
  }
  if (::unlink(paths.plugin.c_str()) != 0)
    throw std::runtime_error("cannot remove " + paths.plugin.string() + ": " + std::strerror(errno));
  ::rmdir(paths.plugin.parent_path().c_str());  // its folder, when nothing else is in it
  std::printf("setup %.*s: removed %s\n", static_cast<int>(options.harness->name.size()), options.harness->name.data(),
              paths.plugin.c_str());
}

// handoff's entries out of `path`, when it holds any; said only then. A file handoff could not
// have written them in (a symlink, JSONC with comments, not JSON) is left as it is.
void take_out_entries(const fs::path& path, const opencode_options& options, const store_dirs& stores,
                      setup_report& report) {
  std::error_code ec;
  if (fs::symlink_status(path, ec).type() != fs::file_type::regular) return;
  std::ifstream in(path, std::ios::binary);
  const ordered_json config = ordered_json::parse(in, nullptr, false);
  if (!config.is_object() || (config.contains("plugin") && !config["plugin"].is_array())) return;
  if (without_handoff_plugin(config, stores.own) == config) return;
  edit_settings({options.harness->name, path, true, options.mode, &report},
                [&](const ordered_json& c) { check_opencode_shape(c, path); },
                [&](ordered_json c) { return without_handoff_plugin(std::move(c), stores.own); });
}

int run_opencode_setup(const opencode_options& options, setup_report& report) {
  const fork& harness = *options.harness;
  opencode_paths paths;
  if (!options.project.empty()) {
    const fs::path dir = fs::absolute(options.project).lexically_normal();
    choose_config(paths, harness, dir);
    paths.plugin = dir / ".opencode" / opencode_plugin_file;
  } else {
    fs::path dir;
    if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg != nullptr && *xdg == '/') {
      dir = fs::path(xdg) / harness.config_dir;
    } else {
      const char* home = std::getenv("HOME");
      if (home == nullptr || *home == '\0')
        return report.failed(harness.name, "HOME is not set; pass --project DIR for a project's config", exit_usage);
      dir = fs::path(home) / ".config" / harness.config_dir;
    }
    choose_config(paths, harness, dir);
    paths.plugin = dir / opencode_plugin_file;
  }
  const std::optional<store_dirs> stores = stores_to_allow(options.artifact_dir);
  if (!stores) return report.failed(harness.name, "no artifact directory: HOME is unset; pass --artifact-dir", exit_usage);
  return run_setup(harness.name, report, [&] {
    precheck_config(paths.config);
    const auto check = [&](const ordered_json& c) { check_opencode_shape(c, paths.config); };
    // One entry in all the fork reads: none left in its other config files (a plugin loaded twice
    // would bound a result twice).
    for (const fs::path& other : paths.others) take_out_entries(other, options, *stores, report);
    if (options.remove) {
      edit_settings({harness.name, paths.config, true, options.mode, &report}, check,
                    [&](ordered_json c) { return without_handoff_plugin(std::move(c), stores->own); });
      remove_plugin(paths, options);
    } else {
      write_plugin(paths, options, report);
      edit_settings({harness.name, paths.config, false, options.mode, &report}, check,
                    [&](ordered_json c) { return with_handoff_plugin(std::move(c), paths.plugin.string(), stores->allow, stores->own);
                  });
    }
  });
}

// "opencode.json", or "the first of A, B that exists (else B)".
std::string configs_named(const fork& harness) {
  if (harness.configs.size() == 1) return std::string(harness.configs.front());
  std::string out = "the first of ";
  for (std::size_t i = 0; i < harness.configs.size(); ++i) out += (i == 0 ? "" : ", ") + std::string(harness.configs[i]);
  return out + " that exists, else " + std::string(harness.new_config);
}

setup_fn add_fork_setup(CLI::App& app, const fork& harness) {
  auto options = std::make_shared<opencode_options>();
  options->harness = &harness;
  const std::string configs = configs_named(harness);
  app.add_option("--project", options->project,
                 "Edit DIR's config instead of the user's in ${XDG_CONFIG_HOME:-~/.config}/" +
                     std::string(harness.config_dir) + "/ (" + configs + "); the plugin goes in DIR/.opencode/handoff/");
  app.add_option("--artifact-dir", options->artifact_dir,
                 "The artifact store " + std::string(harness.name) + "'s read may read without asking [handoffd's default, "
                 "${XDG_CACHE_HOME:-~/.cache}/handoff/results, and its former default while that exists]");
  return setup_runner(app, options, run_opencode_setup);
}

}  // namespace

setup_fn add_setup(CLI::App& app) { return add_fork_setup(app, opencode_fork); }

setup_fn add_kilo_setup(CLI::App& app) { return add_fork_setup(app, kilo_fork); }

}  // namespace handoff::cli::opencode
