// Codex CLI's entry in the harness table (cli/harness/harness.hpp): `handoff setup codex`
// (settings.hpp says exactly what it writes into Codex's config.toml). Codex has no hook: handoff
// reaches it as an MCP server (`handoff mcp`).
#pragma once

#include "cli/harness/harness.hpp"

namespace handoff::cli::codex {

setup_fn add_setup(CLI::App& app);

// `handoff mcp`: the MCP server Codex starts (mcp_server.cpp).
command add_server(CLI::App& app, std::shared_ptr<const daemon_options> daemon);

}  // namespace handoff::cli::codex
