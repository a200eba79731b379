// Claude Code's background-agent hooks (client/cli/harness/claude_code/background.hpp), run as Claude
// Code 2.1.328 runs them: the real `handoff hook claude-code [--deliver]` binary, one hook input
// on stdin, against a real handoffd on a temporary socket, with its spool under a temporary
// XDG_STATE_HOME. capture (SubagentStop, PreToolUse of SubagentHandback), gate (UserPromptSubmit,
// sync: block once a bounded copy is spooled) and deliver (UserPromptSubmit, asyncRewake: the
// pending copies on stderr, exit 2, once).
//
// As Claude Code does, hook() on a UserPromptSubmit starts that prompt's deliverer beside its
// gate (the gate blocks a notice only once it sees its deliverer running), and deliver() on the
// same input gives that deliverer's result; gate_alone() runs a gate with no deliverer.
#include <doctest/doctest.h>

#include <fstream>
#include <future>
#include <map>
#include <memory>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/harness/core/daemon_link.hpp"
#include "cli_process.hpp"
#include "engine/fs/sha256.hpp"
#include "support/daemon_process.hpp"
#include "support/raw_client.hpp"
#include "support/temp_dir.hpp"
#include "support/text_files.hpp"

using namespace handoff::test;
using nlohmann::json;

namespace {

// One Claude Code session's surroundings: its own spool base and the socket the hooks use.
struct session_env {
  temp_dir state{"handoff-cc-state"};
  std::string socket;
  std::string session;
  bool attended = true;

  session_env(std::string sock, std::string session_id) : socket(std::move(sock)), session(std::move(session_id)) {}

  std::vector<std::string> env() const {
    return {"HANDOFF_SOCKET=" + socket,
            "XDG_STATE_HOME=" + state.path().string(),
            "XDG_CACHE_HOME=" + (state.path() / "cache").string(),
            "HANDOFF_AUTOSTART=0",
            std::string("CLAUDE_CODE_SESSION_ATTENDED=") + (attended ? "1" : "0"),
            "HANDOFF_CONTEXT_WINDOW",
            "CLAUDE_CODE_MAX_CONTEXT_TOKENS",
            "HANDOFF_HOOK_SIBLINGS_WAIT_MS"};
  }
  std::filesystem::path spool() const { return state.path() / "handoff" / "claude-code" / session; }
};

// Deliverers started beside their gates, by session and prompt, until the test asks for them
// (each runs on a thread of its own, which feeds its input and collects its output).
std::map<std::string, std::future<cli_result>>& started_deliverers() {
  static std::map<std::string, std::future<cli_result>> running;
  return running;
}

std::future<cli_result> start_deliverer(const session_env& s, const json& input) {
  return std::async(std::launch::async, [env = s.env(), text = input.dump()] {
    return cli_process({"hook", "claude-code", "--deliver"}, text, env).finish(std::chrono::seconds(10));
  });
}

// `handoff hook claude-code` (the capture and the gate) on one hook input. For a
// UserPromptSubmit, as Claude Code does, its deliverer (`--deliver`) is started beside it; deliver()
// on the same input then gives that deliverer's result.
cli_result hook(const session_env& s, const json& input) {
  if (input.value("hook_event_name", "") == "UserPromptSubmit")
    started_deliverers()[s.session + input.dump()] = start_deliverer(s, input);
  return cli_process({"hook", "claude-code"}, input.dump(), s.env()).finish(std::chrono::seconds(10));
}

// The gate alone, as when its deliverer died or was never installed.
cli_result gate_alone(const session_env& s, const json& input) {
  return cli_process({"hook", "claude-code"}, input.dump(), s.env()).finish(std::chrono::seconds(10));
}

// `handoff hook claude-code --deliver` on one hook input: the one hook() started for it, else a
// new one. 10 s: a deliverer left waiting for a decision that never comes (15 s) is killed and
// shows as -SIGKILL.
cli_result deliver(const session_env& s, const json& input) {
  auto& running = started_deliverers();
  if (const auto it = running.find(s.session + input.dump()); it != running.end()) {
    std::future<cli_result> p = std::move(it->second);
    running.erase(it);
    return p.get();
  }
  return start_deliverer(s, input).get();
}

// The key a prompt's decision and deliverer files go by (spool.hpp): sha256 of the session, a
// NUL and the prompt, 32 hex.
std::string prompt_key_of(const std::string& session, const std::string& prompt) {
  std::string keyed = session;
  keyed.push_back('\0');
  keyed += prompt;
  return handoff::sha256_hex(keyed).substr(0, 32);
}

// A background agent's report: `lines` lines "finding NNNN ...", each 56 bytes and a newline,
// then the verdict (no final newline). 3000 lines: 171,000 bytes and the verdict.
std::string long_report(const std::string& tag, const std::string& verdict, std::size_t lines = 3000) {
  std::string out;
  out.reserve(lines * 57 + verdict.size());
  for (std::size_t i = 1; i <= lines; ++i) {
    char row[64];
    std::snprintf(row, sizeof row, "finding %04zu (%s): unchecked return in src/m%04zu.cpp", i, tag.c_str(), i);
    std::string line = row;
    line.resize(56, '.');
    out += line;
    out.push_back('\n');
  }
  out += verdict;
  return out;
}

json subagent_stop(const std::string& session, const std::string& agent, const std::string& text,
                   const std::string& description = "audit", bool listed = true) {
  json tasks = json::array();
  if (listed) tasks.push_back({{"id", agent}, {"type", "subagent"}, {"status", "running"}, {"description", description}});
  return {{"session_id", session},          {"transcript_path", ""}, {"hook_event_name", "SubagentStop"},
          {"agent_id", agent},              {"last_assistant_message", text},
          {"background_tasks", tasks}};
}

// The report as Claude Code shows it in its notice: over 100,000 characters, its first and last
// 50,000 with its cut marker between.
std::string as_shown(const std::string& report) {
  if (report.size() <= 100'000) return report;
  return report.substr(0, 50'000) + "\n... [" + std::to_string(report.size() - 100'000) + " characters truncated] ...\n" +
         report.substr(report.size() - 50'000);
}

std::string task_notification(const std::string& agent, const std::string& report, const std::string& description = "audit") {
  return "<task-notification>\n<task-id>" + agent + "</task-id>\n<tool-use-id>toolu_1</tool-use-id>\n<status>completed</status>\n"
         "<summary>Agent \"" + description + "\" finished</summary>\n<result>" + as_shown(report) +
         "</result>\n<usage></usage>\n</task-notification>";
}

json prompt_submit(const std::string& session, const std::string& prompt) {
  return {{"session_id", session}, {"transcript_path", ""}, {"hook_event_name", "UserPromptSubmit"}, {"prompt", prompt}};
}

using handoff::cli::hook_core::grouped;  // 171016 -> "171,016", as the hooks write sizes

json parsed(const std::string& out) {
  INFO("stdout: ", out);
  const json j = json::parse(out, nullptr, false);
  REQUIRE(j.is_object());
  return j;
}

// The gate blocked its notice: {"decision":"block","reason":"... · handoff ...",
// "hookSpecificOutput":{"hookEventName":"UserPromptSubmit","suppressOriginalPrompt":true}} and
// nothing else (without suppressOriginalPrompt Claude Code draws the whole notice on the screen).
std::string block_reason(const cli_result& r) {
  INFO("gate stderr: ", r.err, " stdout: ", r.out);
  REQUIRE(r.status == 0);
  const json j = parsed(r.out);
  CHECK(j.size() == 3);
  CHECK(j.value("decision", "") == "block");
  CHECK(j["hookSpecificOutput"] == json{{"hookEventName", "UserPromptSubmit"}, {"suppressOriginalPrompt", true}});
  REQUIRE(j.contains("reason"));
  REQUIRE(j["reason"].is_string());
  return j["reason"].get<std::string>();
}

// The block reason says the report of `bytes` was bounded, after Claude Code's own line for the
// notice (`Agent "X" finished`, or for a hand-back "Message from an agent").
bool says_bounded(const std::string& reason, std::size_t bytes) {
  INFO("reason: ", reason);
  const std::size_t at = reason.find(" · handoff bounded its report: " + grouped(bytes) + " -> ");
  return at != std::string::npos && at > 0 && reason.ends_with(" bytes (full text kept)");
}

// The gate let its notice through with one line for the model: the additionalContext it printed.
std::string not_bounded_line(const cli_result& r) {
  INFO("gate stderr: ", r.err);
  REQUIRE(r.status == 0);
  const json j = parsed(r.out);
  CHECK_FALSE(j.contains("decision"));
  REQUIRE(j.contains("hookSpecificOutput"));
  CHECK(j["hookSpecificOutput"].value("hookEventName", "") == "UserPromptSubmit");
  const std::string line = j["hookSpecificOutput"].value("additionalContext", "");
  CHECK(line.starts_with("[handoff: this agent's report was not bounded ("));
  CHECK(line.ends_with("); Claude Code's own copy of it is all there is]"));
  // And the user is told, in one line under Claude Code's own `Agent "X" finished`.
  const std::string shown = j.value("systemMessage", "");
  CHECK(shown.starts_with("handoff: this agent's report was not bounded ("));
  CHECK(shown.size() <= 200);
  CHECK(shown.find('\n') == std::string::npos);
  return line;
}

// A capture prints nothing and exits 0, whatever happens.
void capture(const session_env& s, const json& input) {
  const cli_result r = hook(s, input);
  INFO("capture stderr: ", r.err);
  CHECK(r.status == 0);
  CHECK(r.out.empty());
}

// A deliverer that hands its copies over: exit 2, nothing on stdout; returns its stderr.
std::string handed_over(const cli_result& r) {
  INFO("deliverer stdout: ", r.out, "\nstderr: ", r.err);
  REQUIRE(r.status == 2);
  CHECK(r.out.empty());
  return r.err;
}

// A deliverer with nothing to hand over: exit 0, silent.
void nothing_handed(const cli_result& r) {
  INFO("deliverer stdout: ", r.out, "\nstderr: ", r.err);
  CHECK(r.status == 0);
  CHECK(r.out.empty());
  CHECK(r.err.empty());
}

json check_child(const daemon_process& d, const std::string& parent, const std::string& child) {
  raw_client c(d.socket());
  return c.call("subagent/check", {{"parentId", parent}, {"childId", child}});
}

std::string read_whole(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The artifact a bounded copy names (the quoted path under the daemon's store).
std::filesystem::path artifact_named(const daemon_process& d, const std::string& text) {
  const std::string dir = d.artifact_dir().string();
  const std::size_t at = text.find(dir);
  REQUIRE_MESSAGE(at != std::string::npos, "no artifact path in: ", text);
  const std::size_t end = text.find('\'', at);
  REQUIRE(end != std::string::npos);
  return text.substr(at, end - at);
}

std::vector<std::string> spool_names(const session_env& s, const std::string& prefix) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(s.spool(), ec))
    if (e.path().filename().string().starts_with(prefix)) out.push_back(e.path().filename().string());
  return out;
}

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

mode_t mode_of(const std::filesystem::path& p) {
  struct stat st {};
  REQUIRE(::lstat(p.c_str(), &st) == 0);
  return st.st_mode;
}

}  // namespace

TEST_CASE("claude-code background: a 171 KB report is captured, gated, handed over bounded and once, its full text kept") {
  daemon_process d;
  session_env s(d.socket().string(), "sess-once");
  const std::string report = long_report("audit", "VERDICT: ship it");
  REQUIRE(report.size() == 171'016);
  REQUIRE(count(report, "\n") == 3000);

  capture(s, subagent_stop(s.session, "agent-a1", report));
  const json held = check_child(d, s.session, "agent-a1");
  REQUIRE(held.contains("result"));
  CHECK(held["result"]["state"] == "completed");
  CHECK(held["result"]["title"] == "audit");
  CHECK(held["result"]["bytes"] == report.size());
  CHECK(held["result"]["lines"] == 3001);

  const json notice = prompt_submit(s.session, task_notification("agent-a1", report));
  const std::string reason = block_reason(hook(s, notice));
  // The line the user sees instead of Claude Code's own `Agent "audit" finished`.
  CHECK(reason.starts_with("Agent \"audit\" finished · handoff bounded its report: " + grouped(report.size()) + " -> "));
  CHECK(reason.ends_with(" bytes (full text kept)"));
  CHECK(reason.find('\n') == std::string::npos);
  CHECK(check_child(d, s.session, "agent-a1")["result"]["state"] == "delivered");  // taken by the gate's wait

  const std::string copy = handed_over(deliver(s, notice));
  CHECK(copy.size() <= 16 * 1024);
  CHECK(copy.find("finding 0001 (audit): unchecked return in src/m0001.cpp") != std::string::npos);
  CHECK(copy.find("VERDICT: ship it") != std::string::npos);
  CHECK(copy.find("finding 1500 (audit)") == std::string::npos);  // the middle is left out
  // The bounded size the reason announced is what the model is given (its copy holds it).
  const std::size_t arrow = reason.find(" -> ") + 4;
  std::string bounded = reason.substr(arrow, reason.find(" bytes", arrow) - arrow);
  std::erase(bounded, ',');
  CHECK(copy.size() >= std::stoul(bounded));

  const std::filesystem::path artifact = artifact_named(d, copy);
  CHECK(artifact.filename().string() == handoff::sha256_hex(report) + ".txt");
  CHECK(read_whole(artifact) == report);

  // Handed over once: the same notice again is blocked as delivered, its deliverer and the next
  // prompt's hand nothing over.
  const std::string again = block_reason(hook(s, notice));
  CHECK(again.find("handoff delivered its report bounded, with another agent's") != std::string::npos);
  nothing_handed(deliver(s, notice));
  nothing_handed(deliver(s, prompt_submit(s.session, "hello")));
  CHECK(spool_names(s, "pending-").empty());
  CHECK(spool_names(s, "delivered-").size() == 1);
  CHECK(spool_names(s, "decision-").empty());  // each deliverer removed its prompt's decision
}

TEST_CASE("claude-code background: a deliverer started before its gate waits for the gate's decision, then hands the copy over") {
  daemon_process d;
  session_env s(d.socket().string(), "sess-race");
  const std::string report = long_report("race", "VERDICT: raced");
  capture(s, subagent_stop(s.session, "agent-n1", report));
  const json notice = prompt_submit(s.session, task_notification("agent-n1", report));

  // Claude Code starts both UserPromptSubmit hooks at once; here the deliverer is well ahead: it
  // has said it runs (its start in the spool) before the gate begins.
  std::future<cli_result> deliverer = start_deliverer(s, notice);
  const std::string key = prompt_key_of(s.session, notice["prompt"].get<std::string>());
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (spool_names(s, "started-" + key).empty() && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // the poll interval
  REQUIRE(spool_names(s, "started-" + key).size() == 1);
  block_reason(gate_alone(s, notice));
  const auto gated = std::chrono::steady_clock::now();
  const std::string copy = handed_over(deliverer.get());
  CHECK(std::chrono::steady_clock::now() - gated < std::chrono::seconds(3));  // not the 15 s give-up
  CHECK(copy.find("VERDICT: raced") != std::string::npos);
  CHECK(spool_names(s, "pending-").empty());
  CHECK(spool_names(s, "decision-").empty());
}

TEST_CASE("claude-code background: a copy whose deliverer died after it started is handed over by the next prompt's deliverer, once") {
  daemon_process d;
  session_env s(d.socket().string(), "sess-orphan");
  const std::string report = long_report("orphan", "VERDICT: needs work");
  capture(s, subagent_stop(s.session, "agent-b1", report));
  const std::string notice = task_notification("agent-b1", report);
  // Its deliverer said it runs, then died before handing over: the gate blocks, as it should.
  std::filesystem::create_directories(s.spool());
  { std::ofstream(s.spool() / ("started-" + prompt_key_of(s.session, notice))); }
  block_reason(gate_alone(s, prompt_submit(s.session, notice)));
  REQUIRE(spool_names(s, "pending-").size() == 1);

  const json hello = prompt_submit(s.session, "hello");
  CHECK(hook(s, hello).out.empty());  // a plain prompt: the gate says nothing
  const std::string copy = handed_over(deliver(s, hello));
  CHECK(copy.find("finding 0001 (orphan)") != std::string::npos);
  CHECK(copy.find("VERDICT: needs work") != std::string::npos);
  CHECK(count(copy, "VERDICT: needs work") == 1);
  CHECK(read_whole(artifact_named(d, copy)) == report);

  nothing_handed(deliver(s, prompt_submit(s.session, "and then?")));
  CHECK(spool_names(s, "pending-").empty());
}

TEST_CASE("claude-code background: a resumed agent's second, different report is bounded and delivered as <id>.2") {
  daemon_process d;
  session_env s(d.socket().string(), "sess-resumed");
  const std::string first = long_report("round one", "VERDICT: first pass done");
  const std::string second = long_report("round two", "VERDICT: second pass done", 2800);

  capture(s, subagent_stop(s.session, "agent-c1", first));
  const json notice1 = prompt_submit(s.session, task_notification("agent-c1", first));
  CHECK(says_bounded(block_reason(hook(s, notice1)), first.size()));
  const std::string copy1 = handed_over(deliver(s, notice1));
  CHECK(copy1.find("VERDICT: first pass done") != std::string::npos);
  CHECK(copy1.find("round two") == std::string::npos);

  capture(s, subagent_stop(s.session, "agent-c1", second));
  const json c2 = check_child(d, s.session, "agent-c1.2");
  REQUIRE(c2.contains("result"));
  CHECK(c2["result"]["state"] == "completed");
  CHECK(c2["result"]["bytes"] == second.size());
  CHECK(c2["result"]["title"] == "audit");
  CHECK(check_child(d, s.session, "agent-c1")["result"]["state"] == "delivered");  // the first, untouched

  const json notice2 = prompt_submit(s.session, task_notification("agent-c1", second));
  CHECK(says_bounded(block_reason(hook(s, notice2)), second.size()));
  const std::string copy2 = handed_over(deliver(s, notice2));
  CHECK(copy2.find("finding 0001 (round two)") != std::string::npos);
  CHECK(copy2.find("VERDICT: second pass done") != std::string::npos);
  CHECK(copy2.find("round one") == std::string::npos);
  CHECK(read_whole(artifact_named(d, copy2)) == second);
  CHECK(check_child(d, s.session, "agent-c1.2")["result"]["state"] == "delivered");
  CHECK(check_child(d, s.session, "agent-c1.3")["error"]["code"] == -32002);

  // The same second report captured again (SubagentStop fired twice): no third child.
  capture(s, subagent_stop(s.session, "agent-c1", second));
  CHECK(check_child(d, s.session, "agent-c1.3")["error"]["code"] == -32002);
}

TEST_CASE("claude-code background: the line the user sees is one line of at most 200 bytes, whatever the agent's description") {
  daemon_process d;
  session_env s(d.socket().string(), "sess-line");
  const std::string report = long_report("audit", "VERDICT: ship it");
  // A description the model wrote: a line break, a tab, an escape, and 300 bytes of "é" (2 bytes each).
  std::string description = "two\nlines\tand \x1b[31m";
  for (int i = 0; i < 150; ++i) description += "\xC3\xA9";
  capture(s, subagent_stop(s.session, "agent-l1", report, description));
  const std::string reason = block_reason(hook(s, prompt_submit(s.session, task_notification("agent-l1", report, description))));
  const std::string shown = reason.substr(0, reason.find(" · handoff "));
  CHECK(shown.starts_with("Agent \"two lines and  [31m"));
  CHECK(shown.size() <= 200);
  CHECK(shown.size() >= 199);
  CHECK(shown.find_first_of("\n\t\x1b") == std::string::npos);
  CHECK((static_cast<unsigned char>(shown.back()) & 0xC0) != 0xC0);  // not cut inside "é"
  CHECK(json(shown).dump() != "");  // well-formed UTF-8: dump() throws on a cut character
  CHECK(says_bounded(reason, report.size()));
}

TEST_CASE("claude-code background: two reports ready together share the first notice's copy, the second notice is blocked as delivered") {
  daemon_process d;
  session_env s(d.socket().string(), "sess-pair");
  const std::string report_a = long_report("alpha", "VERDICT ALPHA: ship it");
  const std::string report_b = long_report("beta", "VERDICT BETA: hold it");
  capture(s, subagent_stop(s.session, "agent-d1", report_a, "alpha"));
  capture(s, subagent_stop(s.session, "agent-d2", report_b, "beta"));

  const json notice_a = prompt_submit(s.session, task_notification("agent-d1", report_a, "alpha"));
  CHECK(says_bounded(block_reason(hook(s, notice_a)), report_a.size()));
  CHECK(check_child(d, s.session, "agent-d2")["result"]["state"] == "delivered");  // taken with agent-d1's
  const std::string copy = handed_over(deliver(s, notice_a));
  CHECK(copy.find("VERDICT ALPHA: ship it") != std::string::npos);
  CHECK(copy.find("VERDICT BETA: hold it") != std::string::npos);
  CHECK(copy.find("finding 0001 (alpha)") != std::string::npos);
  CHECK(copy.find("finding 0001 (beta)") != std::string::npos);

  const json notice_b = prompt_submit(s.session, task_notification("agent-d2", report_b, "beta"));
  const std::string reason_b = block_reason(hook(s, notice_b));
  CHECK(reason_b.find("handoff delivered its report bounded, with another agent's") != std::string::npos);
  nothing_handed(deliver(s, notice_b));
  CHECK(spool_names(s, "pending-").empty());
  CHECK(spool_names(s, "delivered-").size() == 1);
}

TEST_CASE("claude-code background: a short report leaves no state in handoffd, the gate and the deliverer say nothing") {
  daemon_process d;
  session_env s(d.socket().string(), "sess-short");
  const std::string report = "Checked the parser: 3 findings, all minor.\nVERDICT: ship it";
  capture(s, subagent_stop(s.session, "agent-e1", report));
  CHECK(check_child(d, s.session, "agent-e1")["error"]["code"] == -32001);  // no such parent: nothing was sent

  const json notice = prompt_submit(s.session, task_notification("agent-e1", report));
  const cli_result gate = hook(s, notice);
  CHECK(gate.status == 0);
  CHECK(gate.out.empty());
  CHECK_FALSE(std::filesystem::exists(s.spool()));  // nothing to hand over: no spool either
  const auto started = std::chrono::steady_clock::now();
  nothing_handed(deliver(s, notice));
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(3));  // waits for no decision

  raw_client c(d.socket());
  const json status = c.call("daemon/status", json::object());
  CHECK(status["result"]["parents"] == 0);
  CHECK(check_child(d, s.session, "agent-e1")["error"]["code"] == -32001);
}

TEST_CASE("claude-code background: a foreground agent's SubagentStop (not among background_tasks) is not captured") {
  daemon_process d;
  session_env s(d.socket().string(), "sess-foreground");
  capture(s, subagent_stop(s.session, "agent-f1", long_report("fg", "VERDICT: fg"), "audit", false));
  CHECK(check_child(d, s.session, "agent-f1")["error"]["code"] == -32001);
}

TEST_CASE("claude-code background: a notice whose report fits passes at once, the gate contacts no handoffd") {
  // A socket that accepts and never answers: a gate that called it would wait out its budget.
  temp_dir dir("handoff-cc-silent");
  const std::filesystem::path path = dir / "silent.sock";
  const int listener = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  REQUIRE(listener >= 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  REQUIRE(path.string().size() < sizeof addr.sun_path);
  std::memcpy(addr.sun_path, path.c_str(), path.string().size() + 1);
  REQUIRE(::bind(listener, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0);
  REQUIRE(::listen(listener, 16) == 0);

  session_env s(path.string(), "sess-fits");
  const std::string report = "Checked the lexer: nothing to change.\nVERDICT: ship it";
  capture(s, subagent_stop(s.session, "agent-o1", report));
  const json notice = prompt_submit(s.session, task_notification("agent-o1", report));
  const auto started = std::chrono::steady_clock::now();
  const cli_result gate = hook(s, notice);
  CHECK(gate.status == 0);
  CHECK(gate.out.empty());
  nothing_handed(deliver(s, notice));
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(2));
  // No one connected, for the capture, the gate or the deliverer.
  const int accepted = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
  CHECK(accepted < 0);
  if (accepted >= 0) ::close(accepted);
  ::close(listener);
  CHECK_FALSE(std::filesystem::exists(s.spool()));
}

TEST_CASE("claude-code background: with no handoffd listening the hooks cut the report themselves - head and verdict within the caps, one line naming a private copy, the notice blocked") {
  temp_dir nowhere("handoff-cc-nosock");
  session_env s((nowhere / "handoffd.sock").string(), "sess-down");
  const std::string report = long_report("down", "VERDICT: down");
  capture(s, subagent_stop(s.session, "agent-g1", report));
  CHECK(spool_names(s, "local-") == std::vector<std::string>{"local-agent-g1"});

  const json notice = prompt_submit(s.session, task_notification("agent-g1", report));
  const auto started = std::chrono::steady_clock::now();
  const cli_result gate = hook(s, notice);
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(4));
  INFO("gate: ", gate.out);
  CHECK(gate.out.find("\"block\"") != std::string::npos);
  CHECK(gate.out.find("handoff cut its report itself, handoffd not reached: 171,013 -> ") != std::string::npos);
  const std::string copy = handed_over(deliver(s, notice));
  CHECK(copy.size() <= 16 * 1024 + 1024);
  CHECK(copy.find("finding 0001 (down)") != std::string::npos);
  CHECK(copy.find("VERDICT: down") != std::string::npos);
  const std::string lead = "the head and tail above were cut by the hook itself, the full text (171,013 bytes) is in ";
  const std::size_t at = copy.find(lead);
  REQUIRE(at != std::string::npos);
  CHECK(copy.find("[handoff: handoff's daemon was not reached (") != std::string::npos);
  const std::string path = copy.substr(at + lead.size(), copy.find(']', at) - at - lead.size());
  CHECK(read_text(path) == report);
  CHECK(std::filesystem::path(path).parent_path() == s.state.path() / "cache" / "handoff" / "unbounded");
  // Taken: the kept report is gone from the spool, noted as passed (should handoffd hold it
  // after all, a later gate takes it out there), and the next deliverer has nothing.
  CHECK(spool_names(s, "local-").empty());
  CHECK(spool_names(s, "passed-") == std::vector<std::string>{"passed-agent-g1"});

  // A short notice that Claude Code showed whole passes with nothing said.
  const cli_result short_gate = hook(s, prompt_submit(s.session, task_notification("agent-g2", "all fine")));
  CHECK(short_gate.status == 0);
  CHECK(short_gate.out.empty());
}

TEST_CASE("claude-code background: with no handoffd and nothing captured the gate lets a long notice through with one not-bounded line") {
  temp_dir nowhere("handoff-cc-nosock2");
  session_env s((nowhere / "handoffd.sock").string(), "sess-down2");
  const std::string report = long_report("down", "VERDICT: down");
  const json notice = prompt_submit(s.session, task_notification("agent-g1", report));
  const cli_result gate = hook(s, notice);
  const std::string line = not_bounded_line(gate);
  CHECK(line.starts_with("[handoff: this agent's report was not bounded (handoffd: "));
  CHECK(gate.out.find("\"block\"") == std::string::npos);
  CHECK(spool_names(s, "passed-") == std::vector<std::string>{"passed-agent-g1"});
  nothing_handed(deliver(s, notice));
}

TEST_CASE("claude-code background: a long report handoffd never received passes with the not-bounded line") {
  daemon_process d;
  session_env s(d.socket().string(), "sess-missed");
  const std::string report = long_report("missed", "VERDICT: missed");
  // (no capture: its SubagentStop never reached handoffd)
  const json notice = prompt_submit(s.session, task_notification("agent-h1", report));
  CHECK(not_bounded_line(hook(s, notice)) ==
        "[handoff: this agent's report was not bounded (its full text never reached handoffd); Claude Code's own copy "
        "of it is all there is]");
  nothing_handed(deliver(s, notice));
  CHECK(spool_names(s, "passed-").empty());
}

TEST_CASE("claude-code background: a report let through unbounded is cancelled by the next gate, not handed over with another's") {
  daemon_process d;
  session_env s(d.socket().string(), "sess-passed");
  const std::string report_a = long_report("first", "VERDICT FIRST: passed through");
  const std::string report_b = long_report("second", "VERDICT SECOND: bounded");
  capture(s, subagent_stop(s.session, "agent-i1", report_a));
  REQUIRE(check_child(d, s.session, "agent-i1")["result"]["state"] == "completed");

  d.stop();  // handoffd is down when the first notice comes
  const json notice_a = prompt_submit(s.session, task_notification("agent-i1", report_a));
  CHECK(not_bounded_line(hook(s, notice_a)).starts_with("[handoff: this agent's report was not bounded (handoffd: "));
  nothing_handed(deliver(s, notice_a));
  CHECK(spool_names(s, "passed-") == std::vector<std::string>{"passed-agent-i1"});

  d.start();  // back, holding agent-i1's report (durable)
  REQUIRE(check_child(d, s.session, "agent-i1")["result"]["state"] == "completed");
  capture(s, subagent_stop(s.session, "agent-i2", report_b));
  const json notice_b = prompt_submit(s.session, task_notification("agent-i2", report_b));
  CHECK(says_bounded(block_reason(hook(s, notice_b)), report_b.size()));
  CHECK(check_child(d, s.session, "agent-i1")["result"]["state"] == "cancelled");
  CHECK(spool_names(s, "passed-").empty());
  const std::string copy = handed_over(deliver(s, notice_b));
  CHECK(copy.find("VERDICT SECOND: bounded") != std::string::npos);
  CHECK(copy.find("VERDICT FIRST") == std::string::npos);  // the model had it already, from Claude Code
  CHECK(copy.find("(first)") == std::string::npos);
}

TEST_CASE("claude-code background: the report let through unbounded is the one cancelled, not the same agent's newer report") {
  daemon_process d;
  session_env s(d.socket().string(), "sess-passed-resumed");
  const std::string first = long_report("one", "VERDICT ONE: passed through");
  const std::string second = long_report("two", "VERDICT TWO: resumed", 2900);
  const std::string other = long_report("bee", "VERDICT BEE: another agent");
  capture(s, subagent_stop(s.session, "agent-p1", first));

  d.stop();  // the first notice finds no handoffd: Claude Code's own copy goes to the model
  const json notice1 = prompt_submit(s.session, task_notification("agent-p1", first));
  not_bounded_line(hook(s, notice1));
  nothing_handed(deliver(s, notice1));
  REQUIRE(spool_names(s, "passed-") == std::vector<std::string>{"passed-agent-p1"});

  d.start();
  // The user resumes the agent; its second report is captured before any gate runs again.
  // Capture settles the passed record first: the passed report leaves handoffd before the new
  // one is completed, so no later gate can take one for the other.
  capture(s, subagent_stop(s.session, "agent-p1", second));
  REQUIRE(check_child(d, s.session, "agent-p1")["result"]["state"] == "cancelled");    // the passed one
  REQUIRE(check_child(d, s.session, "agent-p1.2")["result"]["state"] == "completed");  // the new one
  CHECK(spool_names(s, "passed-").empty());

  const json notice2 = prompt_submit(s.session, task_notification("agent-p1", second));
  const cli_result gate2 = hook(s, notice2);
  INFO("second gate: ", gate2.out);
  // The first report (already seen, unbounded) leaves handoffd; the second is bounded.
  CHECK(check_child(d, s.session, "agent-p1")["result"]["state"] == "cancelled");
  CHECK(check_child(d, s.session, "agent-p1.2")["result"]["state"] == "delivered");
  CHECK(gate2.out.find("\"decision\":\"block\"") != std::string::npos);
  const cli_result deliver2 = deliver(s, notice2);
  CHECK(deliver2.status == 2);
  CHECK(deliver2.err.find("VERDICT TWO: resumed") != std::string::npos);
  CHECK(deliver2.err.find("VERDICT ONE") == std::string::npos);

  // Another agent's batch does not hand the first report over a second time.
  capture(s, subagent_stop(s.session, "agent-p2", other, "bee"));
  const json notice3 = prompt_submit(s.session, task_notification("agent-p2", other, "bee"));
  block_reason(hook(s, notice3));
  const std::string copy3 = handed_over(deliver(s, notice3));
  CHECK(copy3.find("VERDICT BEE: another agent") != std::string::npos);
  CHECK(copy3.find("VERDICT ONE") == std::string::npos);
}

TEST_CASE("claude-code background: auto mode, a SubagentHandback report is captured and its hand-back notice gated") {
  daemon_process d;
  session_env s(d.socket().string(), "sess-auto");
  const std::string report = long_report("handback", "VERDICT: handed back");
  const json handback = {{"session_id", s.session},
                         {"transcript_path", ""},
                         {"hook_event_name", "PreToolUse"},
                         {"agent_id", "agent-j1"},
                         {"tool_name", "SubagentHandback"},
                         {"tool_input", {{"message", report}}}};
  capture(s, handback);  // read, never rewritten: nothing printed
  const json held = check_child(d, s.session, "agent-j1");
  REQUIRE(held.contains("result"));
  CHECK(held["result"]["state"] == "completed");
  CHECK(held["result"]["bytes"] == report.size());

  std::string indented_head;
  for (char c : report.substr(0, 2000)) {
    indented_head.push_back(c);
    if (c == '\n') indented_head += "  ";
  }
  const std::string prompt = "<agent-message from=\"agent-j1\">\n[Subagent hand-back] The agent \"handback\" handed "
                             "its work back. The report follows:\n<persisted-output>\nOutput too large (171KB). Full "
                             "output saved to: /tmp/x.txt\n\nPreview (first 2KB):\n  " + indented_head +
                             "\n...\n</persisted-output>\n</agent-message>";
  const json notice = prompt_submit(s.session, prompt);
  CHECK(says_bounded(block_reason(hook(s, notice)), report.size()));
  const std::string copy = handed_over(deliver(s, notice));
  CHECK(copy.find("finding 0001 (handback)") != std::string::npos);
  CHECK(copy.find("VERDICT: handed back") != std::string::npos);
  CHECK(read_whole(artifact_named(d, copy)) == report);
}

// Claude Code 2.1.332: a `context: fork` skill moved to the background in auto mode hands its
// report back unreviewed: notes (indented) before the frame, and the report cut to its first and
// last 50,000 characters with Claude Code's marker, every line indented two spaces.
TEST_CASE("claude-code background: auto mode, a forked skill's unreviewed hand-back cut to 100,000 characters is bounded like an agent's") {
  daemon_process d;
  session_env s(d.socket().string(), "sess-fork");
  const std::string report = long_report("skill", "VERDICT: forked skill done");
  capture(s, subagent_stop(s.session, "agent-f1", report, "/audit"));
  CHECK(check_child(d, s.session, "agent-f1")["result"]["state"] == "completed");

  std::string indented;
  for (const char c : as_shown(report)) {
    indented.push_back(c);
    if (c == '\n') indented += "  ";
  }
  const std::string prompt = "<agent-message from=\"agent-f1\">\n  The text below may be partial, and auto mode did not "
                             "review it.\n[Subagent hand-back] The text below is the final report of a subagent this "
                             "session delegated to. The report follows:\n  " + indented + "\n</agent-message>";
  const json notice = prompt_submit(s.session, prompt);
  CHECK(says_bounded(block_reason(hook(s, notice)), report.size()));
  const std::string copy = handed_over(deliver(s, notice));
  CHECK(copy.find("finding 0001 (skill)") != std::string::npos);
  CHECK(copy.find("VERDICT: forked skill done") != std::string::npos);
  CHECK(read_whole(artifact_named(d, copy)) == report);
}

TEST_CASE("claude-code background: a notice of a shape the gate does not know passes untouched: no block, no line, nothing held") {
  daemon_process d;
  session_env s(d.socket().string(), "sess-unknown");
  const std::string report = long_report("odd", "VERDICT: odd");
  capture(s, subagent_stop(s.session, "agent-u1", report));
  // A notice with something after it, and a hand-back with no frame: Claude Code's own text.
  for (const std::string& prompt : {task_notification("agent-u1", report) + "\nand a line after it",
                                    "<agent-message from=\"agent-u1\">\n" + report + "\n</agent-message>"}) {
    const cli_result gate = hook(s, prompt_submit(s.session, prompt));
    CHECK(gate.status == 0);
    CHECK(gate.out.empty());
    nothing_handed(deliver(s, prompt_submit(s.session, prompt)));
  }
  CHECK(check_child(d, s.session, "agent-u1")["result"]["state"] == "completed");  // still held, for a notice it knows
}

TEST_CASE("claude-code background: headless, the gate never blocks a notice") {
  daemon_process d;
  session_env s(d.socket().string(), "sess-headless");
  s.attended = false;
  const std::string report = long_report("headless", "VERDICT: headless");
  capture(s, subagent_stop(s.session, "agent-k1", report));
  const json notice = prompt_submit(s.session, task_notification("agent-k1", report));
  const cli_result gate = hook(s, notice);
  CHECK(gate.out.find("\"decision\"") == std::string::npos);
  CHECK(not_bounded_line(gate) ==
        "[handoff: this agent's report was not bounded (claude -p: a notice cannot be replaced there); Claude Code's "
        "own copy of it is all there is]");
  CHECK_FALSE(std::filesystem::exists(s.spool()));  // nothing spooled, nothing to hand over
  // Its deliverer (no gate decision is ever written headless) waits for none.
  const auto started = std::chrono::steady_clock::now();
  nothing_handed(deliver(s, notice));
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(3));
  nothing_handed(deliver(s, prompt_submit(s.session, "hello")));
}

TEST_CASE("claude-code background: headless, an Agent call asking for the background or saying nothing runs in the foreground, attended it is left alone") {
  temp_dir nowhere("handoff-cc-nosock");
  session_env s((nowhere / "handoffd.sock").string(), "sess-pretool");
  const json input = {{"session_id", s.session},
                      {"transcript_path", ""},
                      {"hook_event_name", "PreToolUse"},
                      {"tool_name", "Agent"},
                      {"tool_use_id", "toolu_9"},
                      {"tool_input", {{"description", "x"}, {"prompt", "p"}, {"run_in_background", true}}}};
  s.attended = false;
  const cli_result headless = hook(s, input);
  CHECK(headless.status == 0);
  const json out = parsed(headless.out);
  CHECK(out == json{{"hookSpecificOutput",
                     {{"hookEventName", "PreToolUse"},
                      {"updatedInput", {{"description", "x"}, {"prompt", "p"}, {"run_in_background", false}}}}}});

  // No run_in_background, what models usually send: Claude Code runs it in the background too.
  json unsaid = input;
  unsaid["tool_input"].erase("run_in_background");
  CHECK(parsed(hook(s, unsaid).out) == out);

  json foreground = input;
  foreground["tool_input"]["run_in_background"] = false;
  CHECK(hook(s, foreground).out.empty());  // already in the foreground

  s.attended = true;
  const cli_result attended = hook(s, input);
  CHECK(attended.status == 0);
  CHECK(attended.out.empty());
}

TEST_CASE("claude-code background: the spool is a 0700 directory of 0600 files") {
  daemon_process d;
  session_env s(d.socket().string(), "sess-modes");
  const std::string report = long_report("modes", "VERDICT: modes");
  capture(s, subagent_stop(s.session, "agent-l1", report));
  const json notice = prompt_submit(s.session, task_notification("agent-l1", report));

  // The prompt's deliverer, started as hook() starts it, takes the decision and its own start
  // away (and hands the copy over) as soon as it sees the gate's decision: all five files are
  // there together only while it is held. It is stopped once its start is written (it then only
  // looks for a decision the gate has not yet written), and let go after the modes are looked at.
  const std::string key = prompt_key_of(s.session, notice["prompt"].get<std::string>());
  const auto deliverer =
      std::make_shared<cli_process>(std::vector<std::string>{"hook", "claude-code", "--deliver"}, notice.dump(), s.env());
  std::future<cli_result> delivered =
      std::async(std::launch::async, [deliverer] { return deliverer->finish(std::chrono::seconds(30)); });
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (spool_names(s, "started-" + key).empty() && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // the poll interval
  REQUIRE(spool_names(s, "started-" + key).size() == 1);
  deliverer->signal(SIGSTOP);
  struct let_go {
    const cli_process& p;
    bool held = true;
    void operator()() {
      if (held) p.signal(SIGCONT);
      held = false;
    }
    ~let_go() {
      try {
        (*this)();
      } catch (const std::exception&) {
      }
    }
  } release{*deliverer};
  block_reason(gate_alone(s, notice));

  auto check_modes = [&] {
    for (const std::filesystem::path& dir : {s.state.path() / "handoff", s.spool().parent_path(), s.spool()}) {
      INFO(dir.string());
      CHECK(S_ISDIR(mode_of(dir)));
      CHECK((mode_of(dir) & 07777) == 0700);
    }
    std::size_t files = 0;
    for (const auto& e : std::filesystem::directory_iterator(s.spool())) {
      INFO(e.path().string());
      CHECK(S_ISREG(mode_of(e.path())));
      CHECK((mode_of(e.path()) & 07777) == 0600);
      ++files;
    }
    return files;
  };
  // lock, capture's note of the report, the pending copy, the gate's decision and the
  // deliverer's start
  CHECK(spool_names(s, "lock").size() == 1);
  CHECK(spool_names(s, "report-").size() == 1);
  CHECK(spool_names(s, "pending-").size() == 1);
  CHECK(spool_names(s, "decision-").size() == 1);
  CHECK(spool_names(s, "started-").size() == 1);
  CHECK(check_modes() == 5);

  release();
  handed_over(delivered.get());
  CHECK(spool_names(s, "delivered-").size() == 1);
  CHECK(spool_names(s, "decision-").empty());
  CHECK(spool_names(s, "started-").empty());
  CHECK(check_modes() == 3);  // lock, the report's note and the delivered copy
}

TEST_CASE("claude-code background: a resumed agent after handoffd forgot its first report: bounded as <id>.2, nothing left running") {
  daemon_process d({"--forget-after-ms", "100"});
  session_env s(d.socket().string(), "sess-forgotten");
  const std::string first = long_report("early", "VERDICT: early");
  const std::string second = long_report("late", "VERDICT: late", 2900);

  capture(s, subagent_stop(s.session, "agent-m1", first));
  const json notice1 = prompt_submit(s.session, task_notification("agent-m1", first));
  block_reason(hook(s, notice1));
  handed_over(deliver(s, notice1));
  // handoffd forgets the delivered report (a parent idle for --forget-after-ms).
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (check_child(d, s.session, "agent-m1")["result"].value("state", "") != "forgotten" &&
         std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the poll interval
  REQUIRE(check_child(d, s.session, "agent-m1")["result"]["state"] == "forgotten");

  capture(s, subagent_stop(s.session, "agent-m1", second));
  const json notice2 = prompt_submit(s.session, task_notification("agent-m1", second));
  CHECK(says_bounded(block_reason(hook(s, notice2)), second.size()));
  const std::string copy = handed_over(deliver(s, notice2));
  CHECK(copy.find("VERDICT: late") != std::string::npos);
  // Delivered; with --forget-after-ms 100 a slow machine may find it already forgotten, which
  // only a settled child is (a run of the whole suite under load, 2026-12-05).
  const std::string second_state = check_child(d, s.session, "agent-m1.2")["result"].value("state", "");
  CHECK_MESSAGE((second_state == "delivered" || second_state == "forgotten"), second_state);
  // The first report's record is not turned into a child that runs for ever by the capture's
  // refused completion under the first name.
  const std::string first_state = check_child(d, s.session, "agent-m1")["result"].value("state", "");
  CHECK(first_state != "running");
  raw_client c(d.socket());
  CHECK(c.call("daemon/status", json::object())["result"]["children"]["running"] == 0);
}

TEST_CASE("claude-code background: with no deliverer running for its prompt the gate lets the notice pass, and nothing is taken") {
  daemon_process d;
  session_env s(d.socket().string(), "sess-nodeliverer");
  const std::string report = long_report("alone", "VERDICT: alone");
  capture(s, subagent_stop(s.session, "agent-n1", report));
  const auto t0 = std::chrono::steady_clock::now();
  const cli_result gate = gate_alone(s, prompt_submit(s.session, task_notification("agent-n1", report)));
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(6));
  CHECK(gate.out.find("\"decision\"") == std::string::npos);
  CHECK(gate.out.find("no deliverer ran for it") != std::string::npos);
  CHECK(spool_names(s, "pending-").empty());
  // Recorded as passed: the next contact cancels it, so no later batch repeats it.
  CHECK(spool_names(s, "passed-") == std::vector<std::string>{"passed-agent-n1"});
}
