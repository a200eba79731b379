// `handoff setup cline [--cline-dir DIR] [--dry-run] [--remove]`: handoff's plugin file in cline's
// plugins folder (plugin.hpp), and nothing else: cline imports every `*.js` there itself.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "cli/harness/cline/entry.hpp"
#include "cli/harness/cline/plugin.hpp"
#include "cli/harness/settings_file.hpp"
#include "protocol/default_paths.hpp"

namespace handoff::cli::cline {
namespace {

namespace fs = std::filesystem;

inline constexpr std::string_view plugin_file = "plugins/handoff.js";  // in cline's directory

struct cline_options : setup_flags {
  std::string cline_dir;  // --cline-dir DIR: cline's directory [${CLINE_DIR:-~/.cline}]
};

bool is_handoff_plugin_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::string first;
  std::getline(in, first);
  return first.starts_with(cline_plugin_marker);
}

// Writes the plugin, or replaces an earlier one of handoff's; a file of someone else's there is
// refused (edit_settings_text refuses a symlink or anything but a regular file).
void write_plugin(const fs::path& plugin, setup_mode mode, setup_report& report) {
  const fs::path self = rpc::own_executable();
  const std::string source = cline_plugin_source(self.empty() ? std::string("handoff") : self.string());
  edit_settings_text({"cline", plugin, false, mode, &report},
                     [&](const std::optional<std::string>& before) -> std::optional<std::string> {
                       if (before && !before->starts_with(cline_plugin_marker))
                         throw std::runtime_error(plugin.string() + " exists and is not handoff's plugin");
                       if (before == source) return std::nullopt;
                       return source;
                     });
}

void remove_plugin(const fs::path& plugin, setup_mode mode) {
  struct stat st {};
  if (::lstat(plugin.c_str(), &st) != 0) {
    std::printf("setup cline: %s is not there; nothing to remove\n", plugin.c_str());
    return;
  }
  if (!S_ISREG(st.st_mode))
    throw std::runtime_error(plugin.string() + " is not a regular file; handoff removes only its own plugin");
  if (!is_handoff_plugin_file(plugin)) throw std::runtime_error(plugin.string() + " is not handoff's plugin; left as it is");
  if (mode != setup_mode::write) {  // --dry-run (a check never removes: --check excludes --remove)
    std::printf("setup cline: would remove %s\n", plugin.c_str());
    return;
  }
  if (::unlink(plugin.c_str()) != 0)
    throw std::runtime_error("cannot remove " + plugin.string() + ": " + std::strerror(errno));
  std::printf("setup cline: removed %s\n", plugin.c_str());
}

int run_cline_setup(const cline_options& options, setup_report& report) {
  fs::path dir;
  if (!options.cline_dir.empty()) {
    dir = fs::absolute(options.cline_dir).lexically_normal();
  } else if (const char* env = std::getenv("CLINE_DIR"); env != nullptr && *env == '/') {
    dir = env;
  } else {
    const char* home = std::getenv("HOME");
    if (home == nullptr || *home == '\0')
      return report.failed("cline", "HOME is not set; pass --cline-dir DIR", exit_usage);
    dir = fs::path(home) / ".cline";
  }
  const fs::path plugin = dir / plugin_file;
  return run_setup("cline", report, [&] {
    if (options.remove)
      remove_plugin(plugin, options.mode);
    else
      write_plugin(plugin, options.mode, report);
  });
}

}  // namespace

setup_fn add_setup(CLI::App& app) {
  auto options = std::make_shared<cline_options>();
  app.add_option("--cline-dir", options->cline_dir,
                 "cline's directory, whose plugins/ folder cline imports [${CLINE_DIR:-~/.cline}]");
  return setup_runner(app, options, run_cline_setup);
}

}  // namespace handoff::cli::cline
