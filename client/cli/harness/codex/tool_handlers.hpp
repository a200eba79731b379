// The handlers of mcp_tools.hpp's table, one per tool: each checks its arguments, asks the
// children (children.hpp) and handoffd, and writes the text the model reads.
#pragma once

#include <optional>
#include <string>

#include "cli/harness/codex/mcp_tools.hpp"

namespace handoff::cli::codex {

std::optional<std::string> spawn_tool(tool_context& ctx, const tool_call& call);
std::optional<std::string> send_tool(tool_context& ctx, const tool_call& call);
// wait_tool.cpp: one batch from handoffd, bounded for Codex; nullopt when cancelled.
std::optional<std::string> wait_tool(tool_context& ctx, const tool_call& call);
std::optional<std::string> check_tool(tool_context& ctx, const tool_call& call);
std::optional<std::string> cancel_tool(tool_context& ctx, const tool_call& call);
std::optional<std::string> list_tool(tool_context& ctx, const tool_call& call);

// A connection for a tool (no call timeout: a wait may last), or nullopt with `why`.
std::optional<client::connection> connect_for_tool(const tool_context& ctx, std::string& why);

}  // namespace handoff::cli::codex
