// handoff's entry in Codex's config.toml (`${CODEX_HOME:-~/.codex}/config.toml`): its MCP server,
// one table, written where an older one stood or appended, and taken out again exactly
// (config_toml.hpp keeps every other byte). A table that already says the same, however
// written, is left as it is.
//
//   [mcp_servers.handoff]
//   command = "/abs/path/of/handoff"        this handoff, /proc/self/exe resolved
//   args = ["mcp"]                          `handoff mcp`: the MCP server on stdio
//   env = { CODEX_HOME = "/abs/codex/home" } the Codex home the server reads (Codex passes its
//                                            servers no CODEX_HOME of its own)
//   env_vars = ["XDG_RUNTIME_DIR", ...]     passed through from Codex's environment, which
//                                           Codex otherwise filters down to HOME, LANG, PATH,
//                                           SHELL, TERM and TMPDIR: where handoffd's socket and
//                                           queue are (XDG_*, HANDOFF_*), and the model
//                                           providers' API keys for the subagents it starts
//                                           (OPENAI_API_KEY, each provider's env_key in the file)
//   startup_timeout_sec = 20                the server's start may start handoffd
//   tool_timeout_sec = 86400                a wait for subagents may take hours (Codex's
//                                           default, 60 s, would cut it)
//   default_tools_approval_mode = "approve" handoff's tools run without asking the user each
//                                           time under approval_policy "on-request", as Codex's
//                                           own spawn_agent / wait_agent do; the children's
//                                           commands still follow the user's sandbox and
//                                           approval settings (a child is a `codex exec` that
//                                           reads the same config.toml)
//
// And, unless `--keep-native-agents`, Codex's own subagent tools off, so that a model delegates
// through handoff's (codex_native_agents_off; each line marked `# added by handoff setup codex`,
// in tables that may be the user's, toml_marked.hpp):
//
//   [features]
//   multi_agent = false                     the v1 tools (spawn_agent, wait_agent, send_input,
//                                           ...) of models Codex does not know
//   [features.multi_agent_v2]
//   disable_native_tools = true             the `collaboration` namespace and its role prompt
//                                           of Codex's catalog models (multi-agent v2)
//
// A key the user set already is left as they set it, and setup says so.
//
// The table is handoff's: `[mcp_servers.handoff]` and any `[mcp_servers.handoff.*]`. Defined any
// other way (inline, dotted keys) it is refused, never rewritten.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "cli/harness/codex/config_toml.hpp"
#include "cli/harness/codex/toml_marked.hpp"

namespace handoff::cli::codex {

// What handoff's server entry holds; codex_server_table() writes it.
struct codex_server {
  std::string command;                 // the absolute path of handoff
  std::string codex_home;              // absolute; env.CODEX_HOME
  std::vector<std::string> env_keys;   // the model providers' env_key values, in file order
};

// The lines that turn Codex's own subagent tools off (above).
inline const toml_marked_key codex_native_agents_off[] = {
    {{"features"}, "multi_agent", "false"},
    {{"features", "multi_agent_v2"}, "disable_native_tools", "true"},
};

// The key of handoff's table.
inline const toml_key codex_server_key = {"mcp_servers", "handoff"};

// The variables every handoff server is passed from Codex's environment (env_vars), before the
// model providers' env_keys.
inline constexpr std::string_view codex_passed_env[] = {
    "XDG_RUNTIME_DIR", "XDG_STATE_HOME", "XDG_CACHE_HOME", "HANDOFF_SOCKET", "HANDOFF_AUTOSTART",
    // the server's own settings (docs/codex.md)
    "HANDOFF_CODEX", "HANDOFF_CODEX_MAX_RUNNING", "HANDOFF_CODEX_TURN_TIMEOUT_S", "HANDOFF_CODEX_OUTPUT_BYTES",
    "OPENAI_API_KEY"};
// Seconds Codex waits for the server to start, and for one tool call to return.
inline constexpr int codex_startup_timeout_sec = 20;
inline constexpr int codex_tool_timeout_sec = 86400;

// The distinct `env_key` strings of the file's `[model_providers.*]` tables, in file order.
std::vector<std::string> codex_provider_env_keys(const toml::table& root);

// handoff's table as TOML text, lines ending in "\n".
std::string codex_server_table(const codex_server& server);

// Whether `entry` (the file's mcp_servers.handoff) says what codex_server_table(server) says,
// however written: Codex's own `codex mcp add` rewrites every server, handoff's too, with `env`
// as a sub-table and the timeouts as floats; that is no change for setup to make.
bool codex_server_matches(const toml::node& entry, const codex_server& server);

}  // namespace handoff::cli::codex
