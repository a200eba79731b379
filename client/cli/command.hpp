// How `handoff` subcommands plug into main(): each add_*_command() registers its CLI11
// subcommand and returns what to run once parsing chose it. No work happens inside CLI11's
// callbacks, so a subcommand's exit status is an ordinary return value.
#pragma once

#include <functional>

namespace CLI {
class App;
}

namespace handoff::cli {

// Exit statuses shared by every subcommand.
inline constexpr int exit_ok = 0;
inline constexpr int exit_failure = 1;  // I/O trouble: unreadable input, unwritable output
inline constexpr int exit_usage = 2;    // bad arguments or option values

struct command {
  CLI::App* app = nullptr;       // the registered subcommand; parsed() says it was chosen
  std::function<int()> run;      // does the work, returns an exit status
};

}  // namespace handoff::cli
