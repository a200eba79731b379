// `handoff hook copilot` (client/cli/harness/copilot/hook.hpp) against a real handoffd, fed the
// subagentStop inputs GitHub Copilot CLI 1.0.102 gives it (with a transcript as Copilot writes
// it), and `handoff setup copilot` (settings.hpp) on real settings files in a temporary
// COPILOT_HOME. That Copilot itself runs the hook and gives its model what it answers:
// tests/copilot/copilot.test.mjs.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_process.hpp"
#include "support/daemon_process.hpp"
#include "support/daemon_status.hpp"
#include "support/raw_client.hpp"
#include "support/temp_dir.hpp"
#include "support/text_files.hpp"

namespace fs = std::filesystem;
using handoff::test::cli_process;
using handoff::test::cli_result;
using handoff::test::daemon_process;
using handoff::test::long_answer;
using handoff::test::raw_client;
using handoff::test::read_text;
using handoff::test::temp_dir;
using handoff::test::write_text;
using nlohmann::json;
using nlohmann::ordered_json;

namespace {

constexpr std::size_t copilot_cut = 20 * 1024;  // Copilot replaces a tool output over this with a preview

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

mode_t mode_of(const fs::path& path) {
  struct stat st {};
  REQUIRE(::lstat(path.c_str(), &st) == 0);
  return st.st_mode & 0777;
}

std::vector<fs::path> artifacts(const daemon_process& daemon) {
  std::vector<fs::path> found;
  if (!fs::exists(daemon.artifact_dir())) return found;
  for (const auto& e : fs::directory_iterator(daemon.artifact_dir()))
    if (e.path().extension() == ".txt") found.push_back(e.path());
  return found;
}

// handoffd's daemon/status.
json status_of(const daemon_process& daemon) {
  raw_client c(daemon.socket());
  const json status = c.call("daemon/status", json::object());
  REQUIRE(status.contains("result"));
  return status["result"];
}

std::int64_t children_known(const daemon_process& daemon) {
  std::int64_t n = 0;
  for (const auto& [state, count] : status_of(daemon)["children"].items())
    if (count.is_number_integer()) n += count.get<std::int64_t>();
  return n;
}

// Copilot CLI's surroundings for one session: COPILOT_HOME/session-state/<session>/events.jsonl,
// written as Copilot 1.0.102 writes it (each event's "type" first).
struct copilot_session {
  temp_dir dir{"handoff-copilot-hook"};
  fs::path home = dir / "home";
  fs::path transcript;
  std::string session = "3c171a41-dad7-4f16-aaee-4ee12759371d";
  std::string socket;

  explicit copilot_session(std::string socket_path) : socket(std::move(socket_path)) {
    transcript = home / ".copilot" / "session-state" / session / "events.jsonl";
    event({{"type", "session.start"}, {"data", {{"sessionId", session}}}});
    event({{"type", "user.message"}, {"data", {{"content", "Delegate the reports."}}}});
  }

  void event(const ordered_json& e) const {
    fs::create_directories(transcript.parent_path());
    std::ofstream(transcript, std::ios::binary | std::ios::app) << e.dump() << "\n";
  }

  // The parent's model call: its usage record (tokens in and out, its window).
  void usage(std::int64_t input_tokens, std::int64_t window = 64000) const {
    event({{"type", "session.usage_record"},
           {"data", {{"usage", {{"model", "gpt-4.1"}, {"inputTokens", input_tokens}, {"outputTokens", 10},
                                {"initiator", "user"}, {"maxPromptTokens", window}}}}}});
  }

  // The parent's assistant message calling `calls` (toolCallId, description, mode ("" = sync)).
  void message(const std::vector<std::tuple<std::string, std::string, std::string>>& calls) const {
    ordered_json requests = ordered_json::array();
    for (const auto& [id, description, mode] : calls) {
      ordered_json args = {{"description", description}, {"prompt", "do " + description}, {"agent_type", "general-purpose"}};
      if (!mode.empty()) args["mode"] = mode;
      requests.push_back({{"toolCallId", id}, {"name", "task"}, {"arguments", args}, {"type", "function"}});
    }
    event({{"type", "assistant.message"}, {"data", {{"content", ""}, {"toolRequests", requests}}}});
  }

  // A child started for the call `call`.
  void started(const std::string& agent, const std::string& call, const std::string& description,
               const std::string& mode = "sync") const {
    event({{"type", "subagent.started"},
           {"data", {{"toolCallId", call}, {"agentName", "general-purpose"}, {"agentDescription", description},
                     {"executionMode", mode}}},
           {"agentId", agent}});
    // A subagent's own model call: its usage names its call, and is not the parent's.
    event({{"type", "session.usage_record"},
           {"data", {{"usage", {{"inputTokens", 60000}, {"outputTokens", 10}, {"maxPromptTokens", 64000},
                                {"parentToolCallId", call}}}}}});
  }

  // The subagentStop hook input for child `agent` with its answer.
  json stop(const std::string& agent, const std::string& answer) const {
    return {{"sessionId", session},
            {"timestamp", 1796597475867},
            {"cwd", (dir / "work").string()},
            {"transcriptPath", transcript.string()},
            {"agentId", agent},
            {"agentType", "general-purpose"},
            {"agentName", "general-purpose"},
            {"response", answer},
            {"stopReason", "end_turn"},
            {"stop_hook_active", false},
            {"parentAgentId", session}};
  }

  std::vector<std::string> env(std::vector<std::string> extra = {}) const {
    extra.push_back("HANDOFF_SOCKET=" + socket);
    extra.push_back("HANDOFF_AUTOSTART=0");
    extra.push_back("HOME=" + home.string());
    extra.push_back("XDG_CACHE_HOME=" + (dir / "cache").string());
    for (const char* unset : {"HANDOFF_CONTEXT_WINDOW", "HANDOFF_HOOK_SIBLINGS_WAIT_MS"})
      if (std::find_if(extra.begin(), extra.end(), [&](const std::string& e) { return e.starts_with(unset); }) == extra.end())
        extra.push_back(unset);
    return extra;
  }
};

cli_result hook(const json& input, const std::vector<std::string>& env) {
  return cli_process({"hook", "copilot"}, input.dump(), env).finish(std::chrono::seconds(60));
}

// The text a hook's answer gives the model: its modifiedResponse, the answer's only member.
std::string modified(const cli_result& r) {
  REQUIRE_MESSAGE(r.status == 0, r.err);
  REQUIRE_MESSAGE(r.out.ends_with("\n"), r.out);
  const json out = json::parse(r.out);
  REQUIRE(out.size() == 1);
  REQUIRE(out["modifiedResponse"].is_string());
  return out["modifiedResponse"].get<std::string>();
}

// A bounded answer: head, verdict, footer with Copilot's view calls on a file holding the full
// text, within 16 KiB and Copilot's cut; every view range's lines are the full text's.
fs::path check_bounded(const std::string& bounded, const std::string& answer, const std::string& tag = "") {
  CHECK(bounded.size() <= 16 * 1024);
  CHECK(bounded.size() < copilot_cut);
  CHECK(bounded.starts_with(tag + "finding 0001 "));
  CHECK(has(bounded, tag + "VERDICT: ship it"));
  std::smatch full;
  REQUIRE_MESSAGE(std::regex_search(bounded, full, std::regex("Full text: (/\\S+?\\.txt)")), bounded.substr(bounded.size() - 600));
  CHECK(read_text(full[1].str()) == answer);
  CHECK(mode_of(full[1].str()) == 0600);
  const std::regex view("view view_range=\\[(\\d+),(\\d+)\\]");
  std::size_t calls = 0;
  for (auto it = std::sregex_iterator(bounded.begin(), bounded.end(), view); it != std::sregex_iterator(); ++it) {
    const std::size_t first = std::stoul((*it)[1]);
    const std::size_t last = std::stoul((*it)[2]);
    CHECK(first <= last);
    ++calls;
  }
  CHECK(calls > 0);
  CHECK_FALSE(has(bounded, "read offset="));
  return full[1].str();
}

}  // namespace

TEST_CASE("hook copilot: a 171,016-byte answer comes back as a modifiedResponse under Copilot's cut, head, verdict and view pages, stored exactly under its task call") {
  daemon_process daemon;
  copilot_session s(daemon.socket().string());
  s.usage(1000);
  s.message({{"call_1", "audit the parser", ""}});
  s.started("agent-a", "call_1", "audit the parser");
  const std::string answer = long_answer(3001, 57);
  REQUIRE(answer.size() == 171016);
  const cli_result r = hook(s.stop("agent-a", answer), s.env());
  const std::string bounded = modified(r);
  check_bounded(bounded, answer);
  CHECK(artifacts(daemon).size() == 1);
  // handoffd knows the child by its task call, under the session.
  raw_client c(daemon.socket());
  const json check = c.call("subagent/check", {{"parentId", s.session}, {"childId", "call_1"}});
  CHECK_MESSAGE(check.contains("result"), check.dump());
  const json other = c.call("subagent/check", {{"parentId", s.session}, {"childId", "agent-a"}});
  CHECK_MESSAGE(other.contains("error"), other.dump());
}

TEST_CASE("hook copilot: an answer that fits passes as Copilot has it (no output), and handoffd is not called") {
  daemon_process daemon;
  copilot_session s(daemon.socket().string());
  s.message({{"call_1", "check", ""}});
  s.started("agent-a", "call_1", "check");
  const cli_result r = hook(s.stop("agent-a", long_answer(200, 57)), s.env());  // 11 KB
  CHECK(r.status == 0);
  CHECK(r.out.empty());
  CHECK(r.err.empty());
  CHECK(children_known(daemon) == 0);
}

TEST_CASE("hook copilot: two task calls of one assistant message share one budget - the first waits for its sibling, both within 48 KiB") {
  daemon_process daemon;
  copilot_session s(daemon.socket().string());
  s.usage(1000);
  s.message({{"call_1", "report A", ""}, {"call_2", "report B", ""}});
  s.started("agent-a", "call_1", "report A");
  s.started("agent-b", "call_2", "report B");
  const std::vector<std::string> answers = {long_answer(1800, 57, "A-"), long_answer(1800, 57, "B-")};
  std::vector<cli_result> results(2);
  std::atomic<bool> first_done{false};
  std::thread t([&] {
    results[0] = hook(s.stop("agent-a", answers[0]), s.env({"HANDOFF_HOOK_SIBLINGS_WAIT_MS=60000"}));
    first_done = true;
  });
  REQUIRE(handoff::test::waits_asleep(daemon.socket(), 1));
  CHECK_FALSE(first_done.load());  // batchWith: it waits for the other call of its message
  results[1] = hook(s.stop("agent-b", answers[1]), s.env({"HANDOFF_HOOK_SIBLINGS_WAIT_MS=60000"}));
  t.join();
  std::size_t total = 0;
  for (std::size_t i = 0; i < 2; ++i) {
    const std::string bounded = modified(results[i]);
    check_bounded(bounded, answers[i], i == 0 ? "A-" : "B-");
    CHECK_FALSE(has(bounded, i == 0 ? "B-finding" : "A-finding"));  // each child gets its own text
    total += bounded.size();
  }
  CHECK(total <= 48 * 1024);
  CHECK(artifacts(daemon).size() == 2);
}

TEST_CASE("hook copilot: a background agent waits for no sibling, and a short foreground sibling passes whole after the shared wait") {
  daemon_process daemon;
  copilot_session s(daemon.socket().string());
  s.message({{"call_1", "long one", ""}, {"call_2", "short one", ""}, {"call_3", "in the background", "background"}});
  s.started("agent-a", "call_1", "long one");
  s.started("agent-b", "call_2", "short one");
  s.started("agent-c", "call_3", "in the background", "background");
  // The background agent: bounded alone at once, though its message's foreground calls run on.
  const std::string background = long_answer(3001, 57, "C-");
  check_bounded(modified(hook(s.stop("agent-c", background), s.env({"HANDOFF_HOOK_SIBLINGS_WAIT_MS=60000"}))), background, "C-");
  // The short sibling waits for the long one, then is given back whole: no output.
  std::vector<cli_result> results(2);
  std::thread t([&] { results[1] = hook(s.stop("agent-b", "short answer\nVERDICT: fine"), s.env({"HANDOFF_HOOK_SIBLINGS_WAIT_MS=60000"})); });
  REQUIRE(handoff::test::waits_asleep(daemon.socket(), 1));
  const std::string answer = long_answer(3001, 57, "A-");
  results[0] = hook(s.stop("agent-a", answer), s.env({"HANDOFF_HOOK_SIBLINGS_WAIT_MS=60000"}));
  t.join();
  check_bounded(modified(results[0]), answer, "A-");
  CHECK(results[1].status == 0);
  CHECK(results[1].out.empty());
}

TEST_CASE("hook copilot: the parent's latest model call against its maxPromptTokens shrinks the budget when the context is nearly full") {
  daemon_process daemon;
  const std::string answer = long_answer(1500, 57);
  const auto bounded_for = [&](std::int64_t tokens, const std::vector<std::string>& env) {
    copilot_session s(daemon.socket().string());
    s.session = "session-" + std::to_string(tokens) + "-" + std::to_string(env.size());
    s.usage(tokens, 200000);
    s.message({{"call_1", "report", ""}});
    s.started("agent-a", "call_1", "report");  // its own usage record (60,000 tokens) is not the parent's
    return modified(hook(s.stop("agent-a", answer), s.env(env)));
  };
  const std::string free = bounded_for(2000, {});
  const std::string tight = bounded_for(196000, {});
  const std::string own_window = bounded_for(196000, {"HANDOFF_CONTEXT_WINDOW=2000000"});
  CHECK(free.size() > 12 * 1024);
  CHECK(tight.size() < 10 * 1024);
  CHECK(has(tight, "VERDICT: ship it"));
  CHECK(own_window.size() > 12 * 1024);  // $HANDOFF_CONTEXT_WINDOW over the transcript's window
}

TEST_CASE("hook copilot: with handoffd absent the hook cuts head and tail itself, the full text in a 0600 private copy, and one line saying so") {
  temp_dir run("handoff-copilot-absent");
  copilot_session s((run / "no-daemon.sock").string());
  s.message({{"call_1", "audit", ""}, {"call_2", "check", ""}});
  s.started("agent-a", "call_1", "audit");
  s.started("agent-b", "call_2", "check");
  const std::string answer = long_answer(3001, 57);
  const std::string bounded = modified(hook(s.stop("agent-a", answer), s.env()));
  const fs::path copy = check_bounded(bounded, answer);
  CHECK(copy.parent_path() == s.dir / "cache" / "handoff" / "unbounded");
  CHECK(mode_of(copy.parent_path()) == 0700);
  const std::string last = bounded.substr(bounded.rfind('\n') + 1);
  CHECK_MESSAGE(std::regex_match(last, std::regex("\\[handoff: handoff's daemon was not reached \\(.+\\); the head and tail above "
                                                  "were cut by the hook itself, the full text \\(171,016 bytes\\) is in " +
                                                  copy.string() + "\\]")),
                last);
  // A short sibling (it would have waited): passes whole, with the line, under the cut.
  const std::string short_answer = "short answer\nVERDICT: fine";
  const std::string whole = modified(hook(s.stop("agent-b", short_answer), s.env()));
  CHECK(whole.starts_with(short_answer + "\n\n[handoff: handoff's daemon was not reached ("));
  CHECK(whole.ends_with("; the result passes whole]"));
}

TEST_CASE("hook copilot: malformed input, other events and a missing transcript never fail Copilot's turn") {
  daemon_process daemon;
  copilot_session s(daemon.socket().string());
  const std::string big = long_answer(3001, 57);
  for (const std::string& input : {std::string("not json"), std::string("[1,2]"), std::string("{\"response\": 42}"),
                                   json{{"toolName", "task"}, {"toolResult", {{"textResultForLlm", big}}}}.dump(),
                                   std::string()}) {
    const cli_result r = cli_process({"hook", "copilot"}, input, s.env()).finish(std::chrono::seconds(30));
    CHECK(r.status == 0);
    CHECK(r.out.empty());
  }
  // No agent: a long answer is not bounded, said on stderr only.
  json no_agent = s.stop("agent-a", big);
  no_agent.erase("agentId");
  const cli_result r = hook(no_agent, s.env());
  CHECK(r.status == 0);
  CHECK(r.out.empty());
  CHECK(has(r.err, "not bounded"));
  // A transcript that is not there: the child by its agent id, alone; still bounded.
  json lost = s.stop("agent-z", big);
  lost["transcriptPath"] = (s.dir / "missing.jsonl").string();
  check_bounded(modified(hook(lost, s.env())), big);
}

TEST_CASE("hook copilot postToolUseFailure: a failed task call is cancelled in handoffd, so its sibling's wait ends at once") {
  daemon_process daemon;
  copilot_session s(daemon.socket().string());
  s.message({{"call_1", "report A", ""}, {"call_2", "report B", ""}});
  s.started("agent-a", "call_1", "report A");
  const std::string answer = long_answer(1800, 57, "A-");
  cli_result first;
  std::atomic<bool> first_done{false};
  std::thread t([&] {
    first = hook(s.stop("agent-a", answer), s.env({"HANDOFF_HOOK_SIBLINGS_WAIT_MS=60000"}));
    first_done = true;
  });
  REQUIRE(handoff::test::waits_asleep(daemon.socket(), 1));
  CHECK_FALSE(first_done.load());  // it waits for call_2
  // Copilot's postToolUseFailure for call_2: no transcriptPath, no call id, the task's arguments.
  const json failure = {{"sessionId", s.session}, {"timestamp", 1}, {"cwd", (s.dir / "work").string()},
                        {"toolName", "task"},
                        {"toolArgs", {{"description", "report B"}, {"prompt", "do report B"}, {"agent_type", "general-purpose"}}},
                        {"error", "400 bad request"}};
  const auto started = std::chrono::steady_clock::now();
  const cli_result r = hook(failure, s.env({"COPILOT_HOME=" + (s.home / ".copilot").string()}));
  CHECK(r.status == 0);
  CHECK(r.out.empty());
  t.join();
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(20));
  check_bounded(modified(first), answer, "A-");
  // Arguments no call of the transcript has: nothing cancelled, nothing printed.
  json other = failure;
  other["toolArgs"]["prompt"] = "something else";
  const cli_result none = hook(other, s.env({"COPILOT_HOME=" + (s.home / ".copilot").string()}));
  CHECK(none.status == 0);
  CHECK(none.out.empty());
}

TEST_CASE("hook copilot preToolUse: view of a full text in a named store or the private copies is allowed, and anything else is left to Copilot") {
  temp_dir dir("handoff-copilot-pre");
  const fs::path store = dir / "store";
  const fs::path cache = dir / "cache";
  const std::string name = std::string(64, 'a') + ".txt";
  write_text(store / name, "full text\n");
  write_text(cache / "handoff" / "unbounded" / name, "full text\n");
  write_text(dir / "elsewhere" / name, "not a store\n");
  fs::create_symlink(dir / "elsewhere" / name, store / (std::string(64, 'b') + ".txt"));
  write_text(store / "notes.txt", "not a full text\n");
  const std::vector<std::string> env = {"XDG_CACHE_HOME=" + cache.string(), "HOME=" + (dir / "home").string(),
                                        "HANDOFF_AUTOSTART=0"};
  const auto pre = [&](const std::string& tool, const json& args) {
    const json input = {{"sessionId", "s"}, {"timestamp", 1}, {"cwd", (dir / "work").string()}, {"toolName", tool}, {"toolArgs", args}};
    return cli_process({"hook", "copilot", "--store", store.string()}, input.dump(), env).finish(std::chrono::seconds(20));
  };
  const auto allowed = [](const cli_result& r) {
    REQUIRE_MESSAGE(r.status == 0, r.err);
    if (r.out.empty()) return false;
    const json out = json::parse(r.out);
    return out["permissionDecision"] == "allow";
  };
  CHECK(allowed(pre("view", {{"path", (store / name).string()}, {"view_range", {1, 20}}})));
  CHECK(allowed(pre("view", {{"path", (cache / "handoff" / "unbounded" / name).string()}})));
  for (const json& args : {json{{"path", (dir / "elsewhere" / name).string()}},                         // not a store
                           json{{"path", (store / (std::string(64, 'b') + ".txt")).string()}},           // a symlink
                           json{{"path", (store / "notes.txt").string()}},                                // not <sha256>.txt
                           json{{"path", (store / ".." / "elsewhere" / name).string()}},                  // not normal
                           json{{"path", (store / (std::string(64, 'c') + ".txt")).string()}},           // not there
                           json{{"path", "store/" + name}}, json{{"path", 42}}, json::object()}) {
    const cli_result r = pre("view", args);
    CHECK_MESSAGE(!allowed(r), args.dump());
    CHECK(r.out.empty());
  }
  // Other tools, even on a full text: no answer, Copilot's permissions decide.
  CHECK(pre("bash", {{"command", "cat " + (store / name).string()}}).out.empty());
  CHECK(pre("edit", {{"path", (store / name).string()}}).out.empty());
}

namespace {

// A temporary COPILOT_HOME for `handoff setup copilot`, its settings file not yet made.
struct copilot_home {
  temp_dir dir{"handoff-setup-copilot"};
  fs::path home = dir / "copilot-home";
  fs::path settings = home / "settings.json";
  fs::path store = dir / "store";

  cli_result setup(std::vector<std::string> args = {}) const {
    args.insert(args.begin(), {"setup", "copilot", "--artifact-dir", store.string()});
    return cli_process(args, {}, {"COPILOT_HOME=" + home.string(), "HOME=" + (dir / "home").string()})
        .finish(std::chrono::seconds(20));
  }
};

std::string hook_command() { return "'" + fs::canonical(HANDOFF_CLI_PATH).string() + "' hook copilot"; }

ordered_json handoff_entry(const std::string& command = hook_command()) {
  return {{"type", "command"}, {"bash", command}, {"timeoutSec", 1800}};
}
ordered_json handoff_pre_entry(const fs::path& store, const std::string& command = hook_command()) {
  return {{"type", "command"}, {"bash", command + " --store '" + store.string() + "'"}, {"timeoutSec", 10}};
}
ordered_json handoff_failure_entry(const std::string& command = hook_command()) {
  return {{"type", "command"}, {"bash", command}, {"timeoutSec", 30}};
}

const std::string user_settings = R"({
  "model": "gpt-4.1",
  "hooks": {
    "subagentStop": [
      {
        "type": "command",
        "bash": "notify-send subagent-done"
      }
    ],
    "sessionStart": [
      {
        "type": "command",
        "bash": "echo hi"
      }
    ]
  },
  "trusted_folders": [
    "/home/me/src"
  ]
}
)";

}  // namespace

TEST_CASE("setup copilot: a fresh settings file gets the hook alone, a second run changes nothing, --remove empties it") {
  copilot_home h;
  const cli_result r = h.setup();
  CHECK_MESSAGE(r.status == 0, r.err);
  CHECK(r.out == "setup copilot: wrote handoff's entries to " + h.settings.string() + "\n");
  const std::string written = read_text(h.settings);
  CHECK(written == ordered_json{{"hooks", {{"subagentStop", ordered_json::array({handoff_entry()})},
                                           {"preToolUse", ordered_json::array({handoff_pre_entry(h.store)})},
                                           {"postToolUseFailure", ordered_json::array({handoff_failure_entry()})}}}}
                           .dump(2) + "\n");
  CHECK(mode_of(h.settings) == 0600);
  CHECK(h.setup().out == "setup copilot: " + h.settings.string() + " already has handoff's entries; nothing to change\n");
  CHECK(read_text(h.settings) == written);
  CHECK(h.setup({"--remove"}).out == "setup copilot: removed handoff's entries from " + h.settings.string() + "\n");
  CHECK(read_text(h.settings) == "{}\n");
}

TEST_CASE("setup copilot: the user's hooks and members are kept in order, an older install replaced where it stood, and --remove gives back the exact bytes") {
  copilot_home h;
  write_text(h.settings, user_settings);
  ::chmod(h.settings.c_str(), 0644);
  REQUIRE(h.setup().status == 0);
  ordered_json expected = ordered_json::parse(user_settings);
  expected["hooks"]["subagentStop"].push_back(handoff_entry());
  expected["hooks"]["preToolUse"] = ordered_json::array({handoff_pre_entry(h.store)});
  expected["hooks"]["postToolUseFailure"] = ordered_json::array({handoff_failure_entry()});
  CHECK(ordered_json::parse(read_text(h.settings)).dump() == expected.dump());
  CHECK(mode_of(h.settings) == 0644);
  CHECK(h.setup({"--remove"}).status == 0);
  CHECK(read_text(h.settings) == user_settings);

  ordered_json old = ordered_json::parse(user_settings);
  old["hooks"]["subagentStop"].insert(old["hooks"]["subagentStop"].begin(), handoff_entry("'/opt/old/handoff' hook copilot"));
  old["hooks"]["preToolUse"] = ordered_json::array(
      {{{"type", "command"}, {"bash", "guard-tool"}}, handoff_pre_entry("/old/store", "'/opt/old/handoff' hook copilot")});
  write_text(h.settings, old.dump(2) + "\n");
  REQUIRE(h.setup().status == 0);
  const ordered_json got = ordered_json::parse(read_text(h.settings));
  REQUIRE(got["hooks"]["subagentStop"].size() == 2);
  CHECK(got["hooks"]["subagentStop"][0] == handoff_entry());
  CHECK(got["hooks"]["subagentStop"][1]["bash"] == "notify-send subagent-done");
  REQUIRE(got["hooks"]["preToolUse"].size() == 2);
  CHECK(got["hooks"]["preToolUse"][0]["bash"] == "guard-tool");
  CHECK(got["hooks"]["preToolUse"][1] == handoff_pre_entry(h.store));
  CHECK_FALSE(has(read_text(h.settings), "/opt/old/handoff"));
  CHECK_FALSE(has(read_text(h.settings), "/old/store"));
  // A user's hook that only mentions handoff is not handoff's.
  ordered_json mention = ordered_json::parse(user_settings);
  mention["hooks"]["preToolUse"] = ordered_json::array({{{"type", "command"}, {"bash", "echo 'x' hook copilot --stores"}}});
  write_text(h.settings, mention.dump(2) + "\n");
  REQUIRE(h.setup({"--remove"}).status == 0);
  CHECK(ordered_json::parse(read_text(h.settings)) == mention);
}

TEST_CASE("setup copilot --dry-run prints the file as it would be and changes nothing, and without COPILOT_HOME it is HOME/.copilot") {
  copilot_home h;
  const cli_result dry = h.setup({"--dry-run"});
  CHECK(dry.status == 0);
  CHECK(dry.out.starts_with("setup copilot: would write " + h.settings.string() + ":\n{\n"));
  CHECK(has(dry.out, hook_command()));
  CHECK_FALSE(fs::exists(h.settings));

  const fs::path home = h.dir / "home";
  const cli_result r = cli_process({"setup", "copilot"}, {}, {"COPILOT_HOME", "XDG_CACHE_HOME", "HOME=" + home.string()})
                           .finish(std::chrono::seconds(20));
  CHECK_MESSAGE(r.status == 0, r.err);
  const ordered_json got = ordered_json::parse(read_text(home / ".copilot" / "settings.json"));
  CHECK(got["hooks"]["subagentStop"][0] == handoff_entry());
  // Without --artifact-dir: handoffd's default store.
  CHECK(got["hooks"]["preToolUse"][0] == handoff_pre_entry(home / ".cache" / "handoff" / "results"));
}

TEST_CASE("setup copilot: invalid JSON, hooks of another shape, and a symlink are refused, the file untouched") {
  copilot_home h;
  const std::vector<std::pair<std::string, std::string>> refused = {
      {"{\"hooks\": \n", "is not valid JSON"},
      {"[1, 2]\n", "expected a JSON object"},
      {"{\"hooks\": []}\n", "\"hooks\" is not an object"},
      {"{\"hooks\": {\"subagentStop\": {\"type\": \"command\"}}}\n", "\"hooks.subagentStop\" is not an array"},
      {"{\"hooks\": {\"preToolUse\": \"x\"}}\n", "\"hooks.preToolUse\" is not an array"},
      {"{\"hooks\": {\"postToolUseFailure\": {}}}\n", "\"hooks.postToolUseFailure\" is not an array"},
  };
  for (const auto& [text, why] : refused) {
    write_text(h.settings, text);
    for (const std::vector<std::string>& args : {std::vector<std::string>{}, {"--dry-run"}, {"--remove"}}) {
      const cli_result r = h.setup(args);
      CHECK(r.status == 1);
      CHECK_MESSAGE(has(r.err, "setup copilot: " + h.settings.string()), r.err);
      CHECK_MESSAGE(has(r.err, why), r.err);
      CHECK(r.out.empty());
      CHECK(read_text(h.settings) == text);
    }
  }
  fs::remove(h.settings);
  write_text(h.dir / "real.json", "{\"model\": \"x\"}\n");
  fs::create_symlink(h.dir / "real.json", h.settings);
  const cli_result r = h.setup();
  CHECK(r.status == 1);
  CHECK_MESSAGE(has(r.err, "symlink"), r.err);
  CHECK(fs::is_symlink(h.settings));
  CHECK(read_text(h.dir / "real.json") == "{\"model\": \"x\"}\n");
}
