// What every `handoff setup NAME` shares (harness.hpp, setup_report.hpp): its three flags, where
// its findings and failures go, and the settings file under --project DIR or HOME.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "cli/harness/harness.hpp"

namespace handoff::cli {

void add_setup_flags(CLI::App& app, setup_flags& flags) {
  CLI::Option* remove = app.add_flag("--remove", flags.remove, "Take handoff's entries out again (and nothing else)");
  CLI::Option* dry_run = app.add_flag_callback("--dry-run", [&flags] { flags.mode = setup_mode::print; },
                                               "Print the settings file as it would be; change nothing");
  app.add_flag_callback("--check", [&flags] { flags.mode = setup_mode::check; },
                        "Change nothing; say for each file whether handoff's entries are in place there. Exit "
                        "status 0 when setup would change nothing, 1 when it would")
      ->excludes(remove)
      ->excludes(dry_run);
}

void setup_report::found(std::string_view name, setup_finding f) {
  if (!quiet_)
    std::printf("setup %.*s: %s\n", static_cast<int>(name.size()), name.data(), finding_text(name, f).c_str());
  findings_.push_back(std::move(f));
}

int setup_report::failed(std::string_view name, std::string_view why, int status) {
  if (!quiet_) report("setup " + std::string(name), why);
  failure_ = why;
  return status;
}

bool setup_report::would_change() const {
  return std::ranges::any_of(findings_, [](const setup_finding& f) { return f.would_change; });
}

std::string finding_text(std::string_view name, const setup_finding& f) {
  const std::string fix = " (run handoff setup " + std::string(name) + ")";
  if (f.remove) return f.path.string() + (f.would_change ? " holds handoff's entries, which belong elsewhere" + fix
                                                         : " has no entry of handoff's");
  return f.path.string() + (f.would_change ? " lacks handoff's entries" + fix : " has handoff's entries");
}

int run_setup(std::string_view name, setup_report& report, const std::function<void()>& edits) {
  try {
    edits();
    return report.would_change() ? exit_setup_needed : exit_ok;
  } catch (const std::exception& e) {
    return report.failed(name, e.what(), exit_failure);
  }
}

std::filesystem::path project_or_home(const std::string& project, const std::filesystem::path& under) {
  if (!project.empty()) return std::filesystem::absolute(project) / under;
  const char* home = std::getenv("HOME");
  if (home == nullptr || *home == '\0') return {};
  return std::filesystem::path(home) / under;
}

}  // namespace handoff::cli
