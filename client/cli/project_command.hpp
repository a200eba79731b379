// `handoff project [FILE|-]`: the engine's projection of one text, offline, exactly as a
// parent agent would see it; with --json, the metadata too.
#pragma once

#include "cli/command.hpp"

namespace handoff::cli {

command add_project_command(CLI::App& app);

}  // namespace handoff::cli
