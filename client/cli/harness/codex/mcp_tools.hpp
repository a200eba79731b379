// The tools `handoff mcp` offers Codex, each described once (name, description, input schema,
// handler): tools/list lists this table and tools/call looks the name up in it.
//
// A handler returns the tool's text (content[0].text, isError false), or nullopt when its call
// was cancelled (notifications/cancelled: no reply is sent). It throws bad_arguments (or any
// std::exception) for a tool result with isError true and `TOOL: what` to read and fix.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/daemon_command.hpp"
#include "cli/harness/codex/children.hpp"
#include "handoff/cancel_signal.hpp"

namespace handoff::cli::codex {

// What the handlers share, for the server's life.
struct tool_context {
  codex::children& children;
  std::filesystem::path codex_home;  // $CODEX_HOME, else ~/.codex (codex_env.hpp)
  std::size_t output_bytes = 0;      // $HANDOFF_CODEX_OUTPUT_BYTES, 0 when unset
  daemon_options daemon;
};

// One tools/call.
struct tool_call {
  std::string parent;                   // the calling Codex thread (_meta.threadId), never ""
  std::string model;                    // its model (_meta's x-codex-turn-metadata), "" when unsaid
  const nlohmann::json& args;           // params.arguments, an object
  const client::cancel_signal& cancel;  // raised by notifications/cancelled for this call
};

// A tool's argument error: the model reads it and calls again.
struct bad_arguments : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

struct tool {
  std::string_view name;
  std::string description;
  nlohmann::json input_schema;  // a JSON Schema object, additionalProperties false
  std::optional<std::string> (*handler)(tool_context&, const tool_call&);
};

// Every tool, in the order tools/list gives them.
const std::vector<tool>& tools();
// The tool `name` names, or nullptr.
const tool* find_tool(std::string_view name);
// tools/list's `tools`: name, description and inputSchema of each.
nlohmann::json tools_list();

// args[key] as a string: "" when absent or null (bad_arguments when `required`), bad_arguments
// when of another type.
std::string string_arg(const nlohmann::json& args, const char* key, bool required);

}  // namespace handoff::cli::codex
