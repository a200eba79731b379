// `handoff setup opencode [--project DIR] [--dry-run] [--remove]`: handoff's plugin file and its
// entry in opencode.json (settings.hpp, plugin.hpp).
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

struct opencode_options : setup_flags {
  std::string project;       // --project DIR: DIR/opencode.json instead of the user's config
  std::string artifact_dir;  // --artifact-dir: the store opencode's read may read [handoffd's default]
};

struct opencode_paths {
  fs::path config;  // opencode.json
  fs::path plugin;  // handoff's plugin file
};

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

void write_plugin(const opencode_paths& paths, const opencode_options& options) {
  const fs::path self = rpc::own_executable();
  const std::string source = opencode_plugin_source(self.empty() ? std::string("handoff") : self.string());
  edit_settings_text({"opencode", paths.plugin, false, options.dry_run},
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
  if (options.dry_run) {
    std::printf("setup opencode: would remove %s\n", paths.plugin.c_str());
    return;
  }
  if (::unlink(paths.plugin.c_str()) != 0)
    throw std::runtime_error("cannot remove " + paths.plugin.string() + ": " + std::strerror(errno));
  ::rmdir(paths.plugin.parent_path().c_str());  // its folder, when nothing else is in it
  std::printf("setup opencode: removed %s\n", paths.plugin.c_str());
}

int run_opencode_setup(const opencode_options& options) {
  opencode_paths paths;
  if (!options.project.empty()) {
    const fs::path dir = fs::absolute(options.project).lexically_normal();
    paths.config = dir / "opencode.json";
    paths.plugin = dir / ".opencode" / opencode_plugin_file;
  } else {
    fs::path dir;
    if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg != nullptr && *xdg == '/') {
      dir = fs::path(xdg) / "opencode";
    } else {
      const char* home = std::getenv("HOME");
      if (home == nullptr || *home == '\0')
        return setup_failed("opencode", "HOME is not set; pass --project DIR for a project's config", exit_usage);
      dir = fs::path(home) / ".config" / "opencode";
    }
    paths.config = dir / "opencode.json";
    paths.plugin = dir / opencode_plugin_file;
  }
  const std::optional<store_dirs> stores = stores_to_allow(options.artifact_dir);
  if (!stores) return setup_failed("opencode", "no artifact directory: HOME is unset; pass --artifact-dir", exit_usage);
  return run_setup("opencode", [&] {
    precheck_config(paths.config);
    const auto check = [&](const ordered_json& c) { check_opencode_shape(c, paths.config); };
    if (options.remove) {
      edit_settings({"opencode", paths.config, true, options.dry_run}, check,
                    [&](ordered_json c) { return without_handoff_plugin(std::move(c), stores->own); });
      remove_plugin(paths, options);
    } else {
      write_plugin(paths, options);
      edit_settings({"opencode", paths.config, false, options.dry_run}, check,
                    [&](ordered_json c) { return with_handoff_plugin(std::move(c), paths.plugin.string(), stores->allow, stores->own);
                  });
    }
  });
}

}  // namespace

run_fn add_setup(CLI::App& app) {
  auto options = std::make_shared<opencode_options>();
  app.add_option("--project", options->project,
                 "Edit DIR/opencode.json (plugin in DIR/.opencode/handoff/) instead of the user's "
                 "${XDG_CONFIG_HOME:-~/.config}/opencode/opencode.json");
  app.add_option("--artifact-dir", options->artifact_dir,
                 "The artifact store opencode's read may read without asking [handoffd's default, "
                 "${XDG_CACHE_HOME:-~/.cache}/handoff/results, and its former default while that exists]");
  return setup_runner(app, options, run_opencode_setup);
}

}  // namespace handoff::cli::opencode
