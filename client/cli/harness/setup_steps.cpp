// What every `handoff setup NAME` shares (harness.hpp): its two flags, where its failures go, and
// the settings file under --project DIR or HOME.
#include <cstdlib>
#include <exception>
#include <string>

#include "cli/harness/harness.hpp"

namespace handoff::cli {

void add_setup_flags(CLI::App& app, setup_flags& flags) {
  app.add_flag("--remove", flags.remove, "Take handoff's entries out again (and nothing else)");
  app.add_flag("--dry-run", flags.dry_run, "Print the settings file as it would be; change nothing");
}

int setup_failed(std::string_view name, std::string_view why, int status) {
  report("setup " + std::string(name), why);
  return status;
}

int run_setup(std::string_view name, const std::function<void()>& edits) {
  try {
    edits();
    return exit_ok;
  } catch (const std::exception& e) {
    return setup_failed(name, e.what(), exit_failure);
  }
}

std::filesystem::path project_or_home(const std::string& project, const std::filesystem::path& under) {
  if (!project.empty()) return std::filesystem::absolute(project) / under;
  const char* home = std::getenv("HOME");
  if (home == nullptr || *home == '\0') return {};
  return std::filesystem::path(home) / under;
}

}  // namespace handoff::cli
