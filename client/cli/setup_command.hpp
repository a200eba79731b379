// `handoff setup NAME [--project DIR] [--remove] [--dry-run] [--check] ...`: installs handoff into
// a harness's settings, takes it out again, or says whether it is in place (--check); one
// subcommand per harness of the table (cli/harness/harness.hpp), each saying in its own folder
// exactly what it writes.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/command.hpp"

namespace handoff::cli {

command add_setup_command(CLI::App& app);

}  // namespace handoff::cli
