// Pi's entry in the harness table (cli/harness/harness.hpp): `handoff setup pi` (settings.hpp
// says exactly what it writes). Pi's hooks are its TypeScript package, client/pi.
#pragma once

#include "cli/harness/harness.hpp"

namespace handoff::cli::pi {

setup_fn add_setup(CLI::App& app);

}  // namespace handoff::cli::pi
