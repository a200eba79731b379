// `handoff hook claude-code` on a foreground Agent's PostToolUse (client/cli/harness/claude_code/
// hook.hpp), fed the input Claude Code 2.1.328 gives it: bounded by a real handoffd through the
// hook core, and with no handoffd to reach, cut by the hook itself. That Claude Code itself gives
// its model what the hook prints: tests/claude-code/claude-code.test.mjs.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_process.hpp"
#include "support/daemon_process.hpp"
#include "support/temp_dir.hpp"
#include "support/text_files.hpp"

namespace fs = std::filesystem;
using handoff::test::cli_process;
using handoff::test::cli_result;
using handoff::test::daemon_process;
using handoff::test::long_answer;
using handoff::test::read_text;
using handoff::test::temp_dir;
using nlohmann::json;

namespace {

// A foreground Agent call that completed with `answer` (no transcript: no siblings, no usage).
json post_tool_use(const std::string& answer) {
  return {{"session_id", "cc-session-1"},
          {"hook_event_name", "PostToolUse"},
          {"tool_name", "Agent"},
          {"tool_use_id", "toolu_01"},
          {"tool_input", {{"description", "audit the parser"}, {"prompt", "Audit it."}}},
          {"tool_response",
           {{"status", "completed"}, {"agentId", "a1b2c3"}, {"content", {{{"type", "text"}, {"text", answer}}}}}}};
}

// The text the hook puts in place of the Agent's content, from its PostToolUse answer.
std::string answered_text(const cli_result& r) {
  REQUIRE_MESSAGE(r.status == 0, r.err);
  const json out = json::parse(r.out);
  const json& updated = out.at("hookSpecificOutput").at("updatedToolOutput");
  CHECK(updated.at("status") == "completed");  // Claude Code's own response object, kept
  CHECK(updated.at("agentId") == "a1b2c3");
  REQUIRE(updated.at("content").size() == 1);
  return updated.at("content")[0].at("text").get<std::string>();
}

cli_result hook(const json& input, const std::vector<std::string>& env) {
  return cli_process({"hook", "claude-code"}, input.dump(), env).finish(std::chrono::seconds(60));
}

}  // namespace

TEST_CASE("hook claude-code: a foreground Agent's 171,016-byte answer is bounded by handoffd, head and verdict within Claude Code's caps") {
  daemon_process daemon;
  const std::string answer = long_answer(3001, 57);
  const cli_result r = hook(post_tool_use(answer), {"HANDOFF_SOCKET=" + daemon.socket().string(), "HANDOFF_AUTOSTART=0",
                                                    "HANDOFF_CONTEXT_WINDOW", "CLAUDE_CODE_MAX_CONTEXT_TOKENS"});
  const std::string text = answered_text(r);
  CHECK(text.size() <= 16 * 1024 - 768);  // Claude Code's frame is counted
  CHECK(text.starts_with("finding 0001 "));
  CHECK(text.find("VERDICT: ship it") != std::string::npos);
  // The footer's calls are Claude Code's: its Read pages, or one Bash command that lists them.
  CHECK((text.find("Read offset=") != std::string::npos || text.find(" --reader claude-code --plan ") != std::string::npos));
  CHECK(text.find(daemon.artifact_dir().string()) != std::string::npos);
}

TEST_CASE("hook claude-code: with no handoffd to reach, the hook cuts head and tail itself, the full answer in a 0600 private copy the one line names") {
  temp_dir dir{"handoff-claude-down"};
  const std::vector<std::string> env = {"HANDOFF_SOCKET=" + (dir / "no.sock").string(), "HANDOFF_AUTOSTART=0",
                                        "XDG_CACHE_HOME=" + (dir / "cache").string(), "HANDOFF_CONTEXT_WINDOW",
                                        "CLAUDE_CODE_MAX_CONTEXT_TOKENS"};
  const std::string answer = long_answer(500, 60);  // 30 KB: over Claude Code's 14.4 KB of caps
  const std::string text = answered_text(hook(post_tool_use(answer), env));
  CHECK(text.size() <= 16 * 1024 - 768);
  CHECK(text.starts_with("finding 0001 "));
  CHECK(text.find("VERDICT: ship it") != std::string::npos);
  std::smatch line;
  const std::string last = text.substr(text.rfind('\n') + 1);
  REQUIRE_MESSAGE(std::regex_match(last, line, std::regex("\\[handoff: handoff's daemon was not reached \\(.+\\); the head and "
                                                          "tail above were cut by the hook itself, the full text "
                                                          "\\(29,[0-9]{3} bytes\\) is in (\\S+)\\]")),
                  last);
  const fs::path copy = line[1].str();
  CHECK(copy.parent_path() == dir / "cache" / "handoff" / "unbounded");
  CHECK(read_text(copy) == answer);
  struct stat st {};
  REQUIRE(::stat(copy.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  CHECK(text.find("Read offset=") != std::string::npos);  // Claude Code's own Read pages it

  // An answer that fits and has no sibling needs no daemon: nothing printed, it stands.
  const cli_result short_one = hook(post_tool_use("All good.\nVERDICT: fine"), env);
  CHECK(short_one.status == 0);
  CHECK(short_one.out.empty());
}
