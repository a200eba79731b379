// The table of harnesses (harness.hpp). One entry per harness; its folder holds the rest.
#include "cli/harness/harness.hpp"

#include <string>

#include "cli/harness/claude_code/entry.hpp"
#include "cli/harness/cline/entry.hpp"
#include "cli/harness/codex/entry.hpp"
#include "cli/harness/copilot/entry.hpp"
#include "cli/harness/gemini/entry.hpp"
#include "cli/harness/opencode/entry.hpp"
#include "cli/harness/pi/entry.hpp"

namespace handoff::cli {

const std::vector<harness>& harnesses() {
  static const std::vector<harness> table = {
      {"claude-code", "claude",
       "Claude Code: hooks that bound Agent results, foreground and background, and Read access to the artifact "
       "store (~/.claude/settings.json)",
       claude_code::add_setup,
       "Claude Code's hooks (Agent, SubagentStop, SubagentHandback, UserPromptSubmit): one hook input on stdin, its "
       "answer on stdout",
       claude_code::add_hook},
      {"codex", "codex", "Codex CLI: handoff's MCP server (`handoff mcp`) in ${CODEX_HOME:-~/.codex}/config.toml",
       codex::add_setup,
       "", nullptr, codex::add_server},
      {"copilot", "copilot",
       "GitHub Copilot CLI: a subagentStop hook that bounds task results (${COPILOT_HOME:-~/.copilot}/settings.json)",
       copilot::add_setup,
       "GitHub Copilot CLI's subagentStop hook: one hook input on stdin, its modifiedResponse on stdout",
       copilot::add_hook},
      {"gemini", "gemini",
       "Gemini CLI: BeforeTool and AfterTool hooks that bound invoke_agent results (~/.gemini/settings.json)",
       gemini::add_setup,
       "Gemini CLI's BeforeTool and AfterTool hooks on invoke_agent: one hook input on stdin, its answer on stdout",
       gemini::add_hook},
      {"opencode", "opencode",
       "opencode: a plugin whose tool.execute.after bounds task results (${XDG_CONFIG_HOME:-~/.config}/opencode/"
       "opencode.json and handoff/opencode-plugin.js beside it)",
       opencode::add_setup,
       "opencode's task results: the plugin's JSON input on stdin, the task's new output on stdout",
       opencode::add_hook},
      {"kilo", "kilo",
       "Kilo Code's CLI (an opencode fork): opencode's plugin, in ${XDG_CONFIG_HOME:-~/.config}/kilo/ (kilo.json, or "
       "the config there already) and handoff/opencode-plugin.js beside it",
       opencode::add_kilo_setup, "", nullptr},
      {"cline", "cline",
       "cline: a plugin whose afterTool bounds spawn_agent results under cline's 8,000-character cut "
       "(${CLINE_DIR:-~/.cline}/plugins/handoff.js)",
       cline::add_setup,
       "cline's spawn_agent results: the plugin's JSON input on stdin, the call's new result on stdout",
       cline::add_hook},
      {"pi", "pi",
       "Pi: the @handoff/pi package in Pi's packages, and the pi-subagents bridge when pi-subagents is installed "
       "(${PI_CODING_AGENT_DIR:-~/.pi/agent}/settings.json)",
       pi::add_setup, "", nullptr},
  };
  return table;
}

std::vector<command> add_server_commands(CLI::App& app, const std::shared_ptr<const daemon_options>& daemon) {
  std::vector<command> out;
  for (const harness& h : harnesses())
    if (h.add_server != nullptr) out.push_back(h.add_server(app, daemon));
  return out;
}

}  // namespace handoff::cli
