// How one run of `handoff setup NAME` goes (setup_mode) and where it reports what it does not
// print as it goes (setup_report): what `--check` found at each file, and a failure. `handoff
// setup` prints both as they come; `handoff doctor` runs the same check quietly and words what
// it kept its own way.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace handoff::cli {

enum class setup_mode {
  write,  // change the files
  print,  // --dry-run: print each file as it would be; change nothing
  check,  // --check: say whether each file holds handoff's entries; change and print nothing else
};

// `--check`'s exit status when setup would change a file (1, as `diff` says the files differ).
inline constexpr int exit_setup_needed = 1;

// What `--check` found at one file the setup would touch.
struct setup_finding {
  std::filesystem::path path;
  bool remove = false;        // setup would take handoff's entries out of it (opencode's other configs)
  bool would_change = false;  // setup would write (or remove) it
};

class setup_report {
 public:
  // quiet: nothing printed; the findings and the failure only kept (doctor's).
  explicit setup_report(bool quiet = false) : quiet_(quiet) {}

  // Keeps `f`, and prints "setup NAME: PATH has handoff's entries" (or what it lacks) unless quiet.
  void found(std::string_view name, setup_finding f);
  // Keeps `why`, and prints "setup NAME: WHY" on stderr unless quiet; returns `status`.
  int failed(std::string_view name, std::string_view why, int status);

  const std::vector<setup_finding>& findings() const { return findings_; }
  const std::string& failure() const { return failure_; }  // empty when none
  bool would_change() const;

 private:
  bool quiet_;
  std::vector<setup_finding> findings_;
  std::string failure_;
};

// "PATH has handoff's entries", "PATH lacks handoff's entries (run handoff setup NAME)"...
std::string finding_text(std::string_view name, const setup_finding& f);

}  // namespace handoff::cli
