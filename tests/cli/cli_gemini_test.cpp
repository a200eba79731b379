// `handoff hook gemini` (client/cli/harness/gemini/hook.hpp) against a real handoffd, fed the hook
// inputs Gemini CLI 0.61.0 gives it for invoke_agent (its BeforeTool and AfterTool events, with a
// transcript as Gemini writes it), and `handoff setup gemini` (settings.hpp) on real settings
// files in a temporary HOME. That Gemini CLI itself runs the hooks and gives its model what they
// answer: tests/gemini/gemini.test.mjs.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
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
using handoff::test::raw_client;
using handoff::test::temp_dir;
using handoff::test::long_answer;
using handoff::test::read_text;
using handoff::test::write_text;
using nlohmann::json;
using nlohmann::ordered_json;

namespace {

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

// The children handoffd knows, in every state, and its parents (daemon/status).
std::pair<std::int64_t, std::int64_t> known(const daemon_process& daemon) {
  raw_client c(daemon.socket());
  const json status = c.call("daemon/status", json::object());
  REQUIRE(status.contains("result"));
  std::int64_t children = 0;
  for (const auto& [state, n] : status["result"]["children"].items())
    if (n.is_number_integer()) children += n.get<std::int64_t>();
  return {status["result"]["parents"].get<std::int64_t>(), children};
}

// Gemini CLI's surroundings for one session: its project temp dir (~/.gemini/tmp/<project>) with
// the session's transcript in chats/, as Gemini 0.61.0 lays them out.
struct gemini_session {
  temp_dir dir{"handoff-gemini-hook"};
  fs::path project_temp = dir / "home" / ".gemini" / "tmp" / "project";
  fs::path transcript = project_temp / "chats" / "session-2026-01-01T00-00-abc.jsonl";
  std::string session;
  std::string socket;

  gemini_session(std::string socket_path, std::string session_id = "5b8e1a4c-parent")
      : session(std::move(session_id)), socket(std::move(socket_path)) {
    write_text(transcript, json{{"id", "u-1"}, {"timestamp", "2026-01-01T00:00:00Z"}, {"type", "user"},
                                {"content", {{{"text", "Delegate the reports."}}}}}.dump() + "\n");
  }

  // The model's turn that calls the tools: a gemini record, with its tokens (or none).
  void turn(const std::string& id, std::optional<std::int64_t> total = std::nullopt) const {
    json record = {{"id", id}, {"timestamp", "2026-01-01T00:00:01Z"}, {"type", "gemini"}, {"content", ""},
                   {"model", "gemini-2.5-flash"}};
    if (total) record["tokens"] = {{"input", *total - 100}, {"output", 100}, {"cached", 0}, {"thoughts", 0},
                                   {"tool", 0}, {"total", *total}};
    std::ofstream(transcript, std::ios::binary | std::ios::app) << record.dump() << "\n";
  }

  json base(const std::string& event, const json& tool_input) const {
    return {{"session_id", session},          {"transcript_path", transcript.string()},
            {"cwd", (dir / "project").string()}, {"hook_event_name", event},
            {"timestamp", "2026-01-01T00:00:02.000Z"}, {"tool_name", "invoke_agent"},
            {"tool_input", tool_input}};
  }

  std::vector<std::string> env(std::vector<std::string> extra = {}) const {
    extra.push_back("HANDOFF_SOCKET=" + socket);
    extra.push_back("HANDOFF_AUTOSTART=0");
    extra.push_back("HOME=" + (dir / "home").string());
    for (const char* unset : {"HANDOFF_CONTEXT_WINDOW", "HANDOFF_HOOK_SIBLINGS_WAIT_MS"})
      if (std::find_if(extra.begin(), extra.end(), [&](const std::string& e) { return e.starts_with(unset); }) == extra.end())
        extra.push_back(unset);
    return extra;
  }

  fs::path marks() const { return project_temp / "handoff" / "turns"; }
};

json agent_call(const std::string& prompt, const std::string& agent = "reporter") {
  return {{"agent_name", agent}, {"prompt", prompt}};
}

// Gemini CLI 0.61.0's tool_response for a local subagent that finished (LocalSubagentInvocation:
// llmContent in its frame, returnDisplay its progress object; `error` undefined, so absent).
json local_response(const std::string& answer, const std::string& agent = "reporter") {
  return {{"llmContent", {{{"text", "Subagent '" + agent + "' finished.\nTermination Reason: GOAL\nResult:\n" + answer}}}},
          {"returnDisplay", {{"isSubagentProgress", true}, {"agentName", agent}, {"recentActivity", json::array()},
                             {"state", "completed"}, {"result", answer}, {"terminateReason", "GOAL"}}}};
}

cli_result hook(const json& input, const std::vector<std::string>& env) {
  return cli_process({"hook", "gemini"}, input.dump(), env).finish(std::chrono::seconds(60));
}
cli_result hook_raw(const std::string& input, const std::vector<std::string>& env) {
  return cli_process({"hook", "gemini"}, input, env).finish(std::chrono::seconds(60));
}

// The file a bounded answer names: its tailToolCallRequest must be exactly Gemini's read_file.
fs::path requested_file(const cli_result& r) {
  REQUIRE_MESSAGE(r.status == 0, r.err);
  REQUIRE_MESSAGE(r.out.ends_with("\n"), r.out);
  const json out = json::parse(r.out);
  REQUIRE(out.size() == 1);
  const json& specific = out.at("hookSpecificOutput");
  CHECK(specific.size() == 2);
  CHECK(specific.at("hookEventName") == "AfterTool");
  const json& request = specific.at("tailToolCallRequest");
  CHECK(request.at("name") == "read_file");
  CHECK(request.at("args").size() == 1);
  return request.at("args").at("file_path").get<std::string>();
}

// "Full text: PATH —" of the footer: the copy read_file may read.
std::string full_text_path(const std::string& bounded) {
  std::smatch m;
  REQUIRE_MESSAGE(std::regex_search(bounded, m, std::regex("Full text: (\\S+) —")), bounded.substr(bounded.size() > 800 ? bounded.size() - 800 : 0));
  return m[1];
}

// A bounded text of `answer`: its head, its verdict, and a footer whose read_file calls, run on
// the copy it names, give back exactly the omitted lines.
void check_bounded(const std::string& bounded, const std::string& answer, const gemini_session& s, const std::string& tag = "") {
  CHECK(bounded.starts_with(tag + "finding 0001 "));
  CHECK(has(bounded, tag + "VERDICT: ship it"));
  const fs::path copy = full_text_path(bounded);
  CHECK(copy.parent_path() == s.project_temp / "handoff");  // where Gemini's read_file may read
  CHECK(read_text(copy) == answer);
  CHECK(mode_of(copy) == 0600);
  std::smatch omitted;
  REQUIRE_MESSAGE(std::regex_search(bounded, omitted, std::regex("omitted lines (\\d+)-(\\d+)")), bounded.substr(bounded.size() - 800));
  const std::regex call("read_file start_line=(\\d+) end_line=(\\d+)");
  const std::vector<std::string> lines = handoff::test::text_lines(answer);
  std::string back;
  std::size_t next = std::stoul(omitted[1]);
  int calls = 0;
  for (auto it = std::sregex_iterator(bounded.begin(), bounded.end(), call); it != std::sregex_iterator(); ++it) {
    const std::size_t start = std::stoul((*it)[1]), end = std::stoul((*it)[2]);
    CHECK(start == next);
    CHECK(end >= start);
    std::string page;
    for (std::size_t l = start; l <= end && l <= lines.size(); ++l) page += lines[l - 1] + "\n";
    CHECK(page.size() <= 32000);  // a read_file page the reader profile allows
    next = end + 1;
    ++calls;
  }
  CHECK(calls >= 1);
  CHECK(next == std::stoul(omitted[2]) + 1);  // the calls cover the omitted lines, no more, no less
}

}  // namespace

TEST_CASE("hook gemini: a 171,016-byte answer comes back as a read_file of a 0600 bounded copy, stored exactly, and a retry is the same") {
  daemon_process daemon;
  gemini_session s(daemon.socket().string());
  s.turn("g-turn-1", 12000);
  const std::string answer = long_answer(3001, 57);
  REQUIRE(answer.size() == 171016);
  const json input = agent_call("Write report CHILD-0");

  const cli_result before = hook(s.base("BeforeTool", input), s.env());
  CHECK(before.status == 0);
  CHECK(before.out.empty());
  CHECK(before.err.empty());
  CHECK(known(daemon) == std::pair<std::int64_t, std::int64_t>{0, 0});  // BeforeTool: a mark, no daemon

  json after = s.base("AfterTool", input);
  after["tool_response"] = local_response(answer);
  const cli_result r = hook(after, s.env());
  CHECK(r.err.empty());
  const fs::path file = requested_file(r);
  CHECK(file.parent_path() == s.project_temp / "handoff");
  CHECK(mode_of(file) == 0600);
  CHECK(mode_of(s.project_temp / "handoff") == 0700);
  const std::string bounded = read_text(file);
  CHECK(bounded.size() <= 16 * 1024);
  CHECK(bounded.size() > 8 * 1024);  // the budget used, not a stub
  check_bounded(bounded, answer, s);
  CHECK_FALSE(has(bounded, "Subagent 'reporter' finished."));  // the answer, not Gemini's frame
  CHECK_FALSE(has(bounded, daemon.artifact_dir().string()));   // the footer names the readable copy

  const std::vector<fs::path> stored = artifacts(daemon);
  REQUIRE(stored.size() == 1);
  CHECK(read_text(stored[0]) == answer);
  CHECK(known(daemon).second == 1);
  // The call's mark is gone with its answer: the turn's directory is removed once empty.
  CHECK((!fs::exists(s.marks()) || fs::is_empty(s.marks())));

  CHECK(fs::path(full_text_path(bounded)).filename() == stored[0].filename().string().substr(0, 16) + ".txt");

  // Gemini runs the hook again (a retry): the same answer, the same file, one artifact.
  const cli_result again = hook(after, s.env());
  CHECK_MESSAGE(again.err.empty(), again.err);
  CHECK(again.out == r.out);
  CHECK(read_text(file) == bounded);
  CHECK(artifacts(daemon).size() == 1);
  CHECK(known(daemon).second == 1);
}

TEST_CASE("hook gemini: an answer that fits passes as Gemini gave it (no output) and handoffd is not called") {
  daemon_process daemon;
  gemini_session s(daemon.socket().string());
  s.turn("g-turn-1", 5000);
  const json input = agent_call("Write a short report");
  CHECK(hook(s.base("BeforeTool", input), s.env()).out.empty());
  CHECK(fs::exists(s.marks()));
  CHECK_FALSE(fs::is_empty(s.marks()));  // the mark is there until its AfterTool
  json after = s.base("AfterTool", input);
  after["tool_response"] = local_response(long_answer(200, 57));  // 11 KB: under the 16 KiB cap
  const cli_result r = hook(after, s.env());
  CHECK(r.status == 0);
  CHECK(r.out.empty());
  CHECK(r.err.empty());
  CHECK(artifacts(daemon).empty());
  CHECK(known(daemon) == std::pair<std::int64_t, std::int64_t>{0, 0});
  CHECK(fs::is_empty(s.marks()));
  CHECK_FALSE(fs::exists(s.project_temp / "handoff" / "tmp"));
}

TEST_CASE("hook gemini: a generalist's JSON response object is unwrapped to the exact answer, from returnDisplay or from the frame") {
  daemon_process daemon;
  gemini_session s(daemon.socket().string());
  s.turn("g-turn-1");
  // Quotes, backslashes, a tab, non-ASCII: what the JSON wrapping escapes.
  const std::string answer = "He said \"ship\" \\ C:\\tmp\t— naïve ✓\n" + long_answer(1500, 57);
  const std::string wrapped = ordered_json{{"response", answer}}.dump(2);  // JSON.stringify(output, null, 2)
  REQUIRE(wrapped.starts_with("{\n  \"response\": \"He said \\\"ship\\\""));

  json after = s.base("AfterTool", agent_call("Investigate", "generalist"));
  after["tool_response"] = local_response(wrapped, "generalist");
  const cli_result r = hook(after, s.env());
  const std::string bounded = read_text(requested_file(r));
  CHECK(bounded.starts_with("He said \"ship\" \\ C:\\tmp\t— naïve ✓\nfinding 0001 "));
  CHECK_FALSE(has(bounded, "\"response\""));
  std::vector<fs::path> stored = artifacts(daemon);
  REQUIRE(stored.size() == 1);
  CHECK(read_text(stored[0]) == answer);
  CHECK(read_text(full_text_path(bounded)) == answer);

  // Without the progress object (returnDisplay a plain string): the text after Gemini's frame.
  json framed_only = s.base("AfterTool", agent_call("Investigate again", "generalist"));
  framed_only["tool_response"] = local_response(wrapped, "generalist");
  framed_only["tool_response"]["returnDisplay"] = "Subagent generalist finished";
  const std::string other = answer + "\nmore";
  framed_only["tool_response"]["llmContent"][0]["text"] =
      "Subagent 'generalist' finished.\nTermination Reason: GOAL\nResult:\n" + ordered_json{{"response", other}}.dump(2);
  const cli_result r2 = hook(framed_only, s.env());
  CHECK(read_text(requested_file(r2)).starts_with("He said \"ship\""));
  stored = artifacts(daemon);
  REQUIRE(stored.size() == 2);
  CHECK((read_text(stored[0]) == other || read_text(stored[1]) == other));

  // An object that is not the generalist's one string member stands as it is.
  json not_wrapped = s.base("AfterTool", agent_call("Third", "generalist"));
  const std::string two = ordered_json{{"response", answer}, {"other", 1}}.dump(2);
  not_wrapped["tool_response"] = local_response(two, "generalist");
  const cli_result r3 = hook(not_wrapped, s.env());
  CHECK(read_text(requested_file(r3)).starts_with("{\n  \"response\": \"He said"));
}

TEST_CASE("hook gemini: with handoffd absent the hook cuts head and tail itself, within the caps, the full copy where read_file reads, and one line saying so") {
  temp_dir nowhere{"handoff-gemini-down"};
  gemini_session s((nowhere / "no.sock").string());
  s.turn("g-turn-1", 1000);
  const json input = agent_call("Write report CHILD-0");
  CHECK(hook(s.base("BeforeTool", input), s.env()).err.empty());
  json after = s.base("AfterTool", input);
  const std::string answer = long_answer(3001, 57);
  after["tool_response"] = local_response(answer);
  const cli_result r = hook(after, s.env());
  CHECK(r.status == 0);
  CHECK_MESSAGE(r.err.empty(), r.err);
  const std::string bounded = read_text(requested_file(r));
  CHECK(bounded.size() <= 16 * 1024);
  check_bounded(bounded, answer, s);
  const std::string last = bounded.substr(bounded.rfind('\n') + 1);
  CHECK_MESSAGE(last.starts_with("[handoff: handoff's daemon was not reached ("), last);
  CHECK(last.ends_with("; the head and tail above were cut by the hook itself, the full text (171,016 bytes) is in " +
                       full_text_path(bounded) + "]"));
  CHECK_FALSE(fs::exists(s.project_temp / "handoff" / "tmp"));
  CHECK((!fs::exists(s.marks()) || fs::is_empty(s.marks())));  // its mark is not left for a sibling to wait on

  // One that fits, with a sibling marked (so the daemon was needed): it passes as Gemini gave it,
  // the one line on stderr.
  const json first = agent_call("Write report CHILD-1"), second = agent_call("Write report CHILD-2");
  hook(s.base("BeforeTool", first), s.env());
  hook(s.base("BeforeTool", second), s.env());
  json short_one = s.base("AfterTool", first);
  short_one["tool_response"] = local_response("All good.\nVERDICT: fine");
  const cli_result passed = hook(short_one, s.env());
  CHECK(passed.out.empty());
  CHECK_MESSAGE(passed.err.starts_with("handoff: this subagent result was not bounded (handoff's daemon was not reached ("), passed.err);
  CHECK(std::count(passed.err.begin(), passed.err.end(), '\n') == 1);
}

TEST_CASE("hook gemini: malformed input, other tools and events, errors pass through silently") {
  daemon_process daemon;
  gemini_session s(daemon.socket().string());
  s.turn("g-turn-1");
  const std::string big = long_answer(3001, 57);
  json other_tool = s.base("AfterTool", {{"file_path", "/etc/hosts"}});
  other_tool["tool_name"] = "read_file";
  other_tool["tool_response"] = local_response(big);
  json other_event = s.base("BeforeModel", agent_call("x"));
  other_event["tool_response"] = local_response(big);
  json failed = s.base("AfterTool", agent_call("x"));
  failed["tool_response"] = local_response(big);
  failed["tool_response"]["error"] = {{"message", "boom"}, {"type", "execution_failed"}};
  json no_response = s.base("AfterTool", agent_call("y"));
  json odd_shape = s.base("AfterTool", agent_call("z"));
  odd_shape["tool_response"] = {{"llmContent", {{{"text", "no frame at all " + big}}}}};
  json wrong_types = s.base("AfterTool", agent_call("w"));
  wrong_types["session_id"] = 7;
  wrong_types["tool_response"] = "text";
  for (const std::string& input :
       {std::string("not json"), std::string("{"), std::string("[]"), std::string("null"), std::string(),
        other_tool.dump(), other_event.dump(), failed.dump(), no_response.dump(), odd_shape.dump()}) {
    const cli_result r = hook_raw(input, s.env());
    CHECK_MESSAGE(r.status == 0, input.substr(0, 120));
    CHECK_MESSAGE(r.out.empty(), input.substr(0, 120));
    CHECK_MESSAGE(r.err.empty(), (input.substr(0, 120) + " -> " + r.err));
  }
  // Members of other types: the tool's result stands, and the one line says why.
  const cli_result odd = hook(wrong_types, s.env());
  CHECK(odd.status == 0);
  CHECK(odd.out.empty());
  CHECK_MESSAGE(odd.err.starts_with("handoff: this subagent result was not bounded ("), odd.err);
  CHECK(std::count(odd.err.begin(), odd.err.end(), '\n') == 1);
  CHECK(artifacts(daemon).empty());
  // The calls that ended without an answer (an error, a shape with none) are cancelled in
  // handoffd, so no sibling's wait waits for them: two children, none running or held.
  raw_client c(daemon.socket());
  const json status = c.call("daemon/status", json::object())["result"];
  CHECK(status["parents"] == 1);
  CHECK(status["children"] == json{{"running", 0}, {"completed", 0}, {"delivering", 0}, {"delivered", 2}});
  CHECK_FALSE(fs::exists(s.project_temp / "handoff" / "tmp"));
  // An AfterTool with no session or transcript cannot be bounded: a result over the cap says so.
  json anonymous = s.base("AfterTool", agent_call("v"));
  anonymous.erase("transcript_path");
  anonymous["tool_response"] = local_response(big);
  const cli_result r = hook(anonymous, s.env());
  CHECK(r.out.empty());
  CHECK(r.err == "handoff: this subagent result was not bounded (no session or transcript in the hook input); it passes as Gemini CLI gave it\n");
}

TEST_CASE("hook gemini: two calls of one turn share one budget - the first waits for its sibling, both bounded within 48 KiB") {
  daemon_process daemon;
  gemini_session s(daemon.socket().string());
  s.turn("g-turn-1", 20000);
  const std::vector<std::string> tags = {"A-", "B-"};
  std::vector<json> inputs;
  for (const std::string& tag : tags) inputs.push_back(agent_call("Write report " + tag));
  for (const json& input : inputs) CHECK(hook(s.base("BeforeTool", input), s.env()).out.empty());
  std::vector<std::string> answers;
  for (const std::string& tag : tags) answers.push_back(long_answer(1800, 57, tag));

  std::vector<cli_result> results(2);
  std::atomic<bool> first_done{false};
  json first = s.base("AfterTool", inputs[0]);
  first["tool_response"] = local_response(answers[0]);
  std::thread t([&] {
    results[0] = hook(first, s.env({"HANDOFF_HOOK_SIBLINGS_WAIT_MS=60000"}));
    first_done = true;
  });
  REQUIRE(handoff::test::waits_asleep(daemon.socket(), 1));
  CHECK_FALSE(first_done.load());  // batchWith: it waits for the call its turn marked beside it
  json second = s.base("AfterTool", inputs[1]);
  second["tool_response"] = local_response(answers[1]);
  results[1] = hook(second, s.env({"HANDOFF_HOOK_SIBLINGS_WAIT_MS=60000"}));
  t.join();

  std::size_t total = 0;
  std::vector<fs::path> files;
  for (std::size_t i = 0; i < 2; ++i) {
    files.push_back(requested_file(results[i]));
    const std::string bounded = read_text(files[i]);
    check_bounded(bounded, answers[i], s, tags[i]);
    CHECK_FALSE(has(bounded, tags[1 - i] + "finding"));  // each call gets its own child's text
    total += bounded.size();
  }
  CHECK(files[0] != files[1]);
  CHECK(total <= 48 * 1024);
  CHECK(artifacts(daemon).size() == 2);
  CHECK((!fs::exists(s.marks()) || fs::is_empty(s.marks())));
}

TEST_CASE("hook gemini: four calls of one turn fit one 48 KiB budget together, each with its verdict") {
  daemon_process daemon;
  gemini_session s(daemon.socket().string());
  s.turn("g-turn-1", 20000);
  std::vector<json> afters;
  std::vector<std::string> answers;
  for (int i = 0; i < 4; ++i) {
    const std::string tag = "c" + std::to_string(i) + " ";
    const json input = agent_call("Write report CHILD-" + std::to_string(i));
    CHECK(hook(s.base("BeforeTool", input), s.env()).out.empty());
    answers.push_back(long_answer(1001, 41, tag));
    afters.push_back(s.base("AfterTool", input));
    afters.back()["tool_response"] = local_response(answers.back());
  }
  std::vector<cli_result> results(4);
  std::vector<std::thread> running;
  for (std::size_t i = 0; i < 4; ++i)
    running.emplace_back([&, i] { results[i] = hook(afters[i], s.env({"HANDOFF_HOOK_SIBLINGS_WAIT_MS=60000"})); });
  for (std::thread& t : running) t.join();
  std::size_t total = 0;
  for (std::size_t i = 0; i < 4; ++i) {
    const std::string bounded = read_text(requested_file(results[i]));
    check_bounded(bounded, answers[i], s, "c" + std::to_string(i) + " ");
    total += bounded.size();
  }
  CHECK(total <= 48 * 1024);  // alone, each would take up to 16 KiB: 64 KiB
}

TEST_CASE("hook gemini: the transcript's latest tokens against the window shrink the budget when the context is nearly full") {
  daemon_process daemon;
  const std::string answer = long_answer(1500, 57);
  const auto bounded_for = [&](gemini_session& s, const std::vector<std::string>& env) {
    const json input = agent_call("Write the report");
    hook(s.base("BeforeTool", input), s.env(env));
    json after = s.base("AfterTool", input);
    after["tool_response"] = local_response(answer);
    return read_text(requested_file(hook(after, s.env(env))));
  };
  gemini_session roomy(daemon.socket().string(), "session-roomy");
  roomy.turn("g-1", 2000);
  const std::string free = bounded_for(roomy, {"HANDOFF_CONTEXT_WINDOW=200000"});

  gemini_session full(daemon.socket().string(), "session-full");
  full.turn("g-1", 2000);    // an earlier turn
  full.turn("g-2", 196000);  // the latest gemini record is the turn that calls the tool
  const std::string tight = bounded_for(full, {"HANDOFF_CONTEXT_WINDOW=200000"});

  // The same tokens against Gemini's default window (1,048,576) leave room.
  gemini_session default_window(daemon.socket().string(), "session-default");
  default_window.turn("g-1", 196000);
  const std::string roomy_default = bounded_for(default_window, {});

  CHECK(free.size() > 12 * 1024);
  CHECK(tight.size() < 10 * 1024);  // about half of the 4,000 tokens left, 4 bytes each
  CHECK(tight.size() < free.size());
  CHECK(roomy_default.size() > 12 * 1024);
  CHECK(has(tight, "VERDICT: ship it"));
  check_bounded(tight, answer, full);
}

namespace {

// A temporary HOME for `handoff setup gemini`, its settings file not yet made.
struct gemini_home {
  temp_dir dir{"handoff-setup-gemini"};
  fs::path home = dir / "home";
  fs::path settings = home / ".gemini" / "settings.json";

  cli_result setup(std::vector<std::string> args = {}) const {
    args.insert(args.begin(), {"setup", "gemini"});
    return cli_process(args, {}, {"HOME=" + home.string()}).finish(std::chrono::seconds(20));
  }
};

// The hook command setup writes: this build's handoff, its /proc/self/exe resolved, shell-quoted.
std::string hook_command() { return "'" + fs::canonical(HANDOFF_CLI_PATH).string() + "' hook gemini"; }

ordered_json before_group(const std::string& command = hook_command()) {
  return {{"matcher", "invoke_agent"},
          {"hooks", ordered_json::array({{{"type", "command"}, {"name", "handoff"}, {"command", command}, {"timeout", 10000}}})}};
}
ordered_json after_group(const std::string& command = hook_command()) {
  return {{"matcher", "invoke_agent"},
          {"hooks", ordered_json::array({{{"type", "command"}, {"name", "handoff"}, {"command", command}, {"timeout", 1800000}}})}};
}

// A user's settings as Gemini CLI and a hand would leave them: its own hooks, other members.
const std::string user_settings = R"({
  "security": {
    "auth": {
      "selectedType": "gemini-api-key"
    }
  },
  "hooks": {
    "BeforeTool": [
      {
        "matcher": "run_shell_command",
        "hooks": [
          {
            "type": "command",
            "command": "/usr/local/bin/audit-shell",
            "timeout": 5000
          }
        ]
      }
    ],
    "SessionStart": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "echo hi"
          }
        ]
      }
    ],
    "AfterTool": [
      {
        "matcher": "write_file|replace",
        "hooks": [
          {
            "type": "command",
            "command": "prettier --write",
            "name": "format"
          }
        ]
      }
    ]
  },
  "ui": {
    "theme": "GitHub"
  }
}
)";

}  // namespace

TEST_CASE("setup gemini: a fresh settings file gets the two hooks alone, a second run changes nothing, --remove empties it") {
  gemini_home h;
  const cli_result r = h.setup();
  CHECK_MESSAGE(r.status == 0, r.err);
  CHECK(r.out == "setup gemini: wrote handoff's entries to " + h.settings.string() + "\n");
  const std::string written = read_text(h.settings);
  const ordered_json expected = {{"hooks", {{"BeforeTool", ordered_json::array({before_group()})},
                                            {"AfterTool", ordered_json::array({after_group()})}}}};
  CHECK(written == expected.dump(2) + "\n");
  CHECK(mode_of(h.settings) == 0600);

  const cli_result again = h.setup();
  CHECK(again.status == 0);
  CHECK(again.out == "setup gemini: " + h.settings.string() + " already has handoff's entries; nothing to change\n");
  CHECK(read_text(h.settings) == written);

  const cli_result removed = h.setup({"--remove"});
  CHECK(removed.status == 0);
  CHECK(removed.out == "setup gemini: removed handoff's entries from " + h.settings.string() + "\n");
  CHECK(read_text(h.settings) == "{}\n");
  CHECK(h.setup({"--remove"}).out == "setup gemini: " + h.settings.string() + " has no entry of handoff's; nothing to change\n");
}

TEST_CASE("setup gemini: the user's hooks and members are kept in order, and --remove gives back the exact bytes") {
  gemini_home h;
  write_text(h.settings, user_settings);
  ::chmod(h.settings.c_str(), 0644);
  const cli_result r = h.setup();
  CHECK_MESSAGE(r.status == 0, r.err);
  const ordered_json after = ordered_json::parse(read_text(h.settings));
  ordered_json expected = ordered_json::parse(user_settings);
  expected["hooks"]["BeforeTool"].push_back(before_group());
  expected["hooks"]["AfterTool"].push_back(after_group());
  CHECK(after == expected);
  CHECK(after.dump() == expected.dump());  // the same order of members, not only the same values
  CHECK(mode_of(h.settings) == 0644);      // its mode kept

  CHECK(h.setup().out == "setup gemini: " + h.settings.string() + " already has handoff's entries; nothing to change\n");

  CHECK(h.setup({"--remove"}).status == 0);
  CHECK(read_text(h.settings) == user_settings);
  CHECK(mode_of(h.settings) == 0644);
}

TEST_CASE("setup gemini: an install from another handoff is replaced where it stood, not added twice") {
  gemini_home h;
  ordered_json settings = ordered_json::parse(user_settings);
  const std::string old = "'/opt/old/handoff' hook gemini";
  // The old entries between the user's: handoff's BeforeTool first, its AfterTool hook sharing
  // a group with a user's hook.
  settings["hooks"]["BeforeTool"].insert(settings["hooks"]["BeforeTool"].begin(), before_group(old));
  ordered_json shared = after_group(old);
  shared["hooks"].push_back({{"type", "command"}, {"command", "notify-send done"}});
  settings["hooks"]["AfterTool"].insert(settings["hooks"]["AfterTool"].begin(), shared);
  write_text(h.settings, settings.dump(2) + "\n");
  REQUIRE(h.setup().status == 0);
  const ordered_json got = ordered_json::parse(read_text(h.settings));
  const ordered_json& before = got["hooks"]["BeforeTool"];
  REQUIRE(before.size() == 2);
  CHECK(before[0] == before_group());
  CHECK(before[1]["matcher"] == "run_shell_command");
  const ordered_json& after = got["hooks"]["AfterTool"];
  REQUIRE(after.size() == 3);
  CHECK(after[0] == after_group());
  CHECK(after[1] == ordered_json{{"matcher", "invoke_agent"},
                                 {"hooks", ordered_json::array({{{"type", "command"}, {"command", "notify-send done"}}})}});
  CHECK(after[2]["matcher"] == "write_file|replace");
  CHECK_FALSE(has(read_text(h.settings), "/opt/old/handoff"));
}

TEST_CASE("setup gemini --dry-run prints the file as it would be and changes nothing") {
  gemini_home h;
  const cli_result fresh = h.setup({"--dry-run"});
  CHECK(fresh.status == 0);
  CHECK(fresh.out.starts_with("setup gemini: would write " + h.settings.string() + ":\n{\n"));
  CHECK(has(fresh.out, hook_command()));
  CHECK_FALSE(fs::exists(h.settings));
  CHECK_FALSE(fs::exists(h.home / ".gemini"));

  write_text(h.settings, user_settings);
  const cli_result dry = h.setup({"--dry-run"});
  CHECK(dry.status == 0);
  const std::string printed = dry.out.substr(dry.out.find(":\n") + 2);
  ordered_json expected = ordered_json::parse(user_settings);
  expected["hooks"]["BeforeTool"].push_back(before_group());
  expected["hooks"]["AfterTool"].push_back(after_group());
  CHECK(printed == expected.dump(2) + "\n");
  CHECK(read_text(h.settings) == user_settings);

  REQUIRE(h.setup().status == 0);
  const std::string installed = read_text(h.settings);
  const cli_result dry_remove = h.setup({"--remove", "--dry-run"});
  CHECK(dry_remove.out == "setup gemini: would write " + h.settings.string() + ":\n" + user_settings);
  CHECK(read_text(h.settings) == installed);
}

TEST_CASE("setup gemini --project DIR writes DIR/.gemini/settings.json, not the user's") {
  gemini_home h;
  const fs::path project = h.dir / "project";
  fs::create_directories(project);
  write_text(h.settings, user_settings);
  const cli_result r = h.setup({"--project", project.string()});
  CHECK_MESSAGE(r.status == 0, r.err);
  const fs::path file = project / ".gemini" / "settings.json";
  CHECK(r.out == "setup gemini: wrote handoff's entries to " + file.string() + "\n");
  CHECK(ordered_json::parse(read_text(file)) ==
        ordered_json{{"hooks", {{"BeforeTool", ordered_json::array({before_group()})},
                                {"AfterTool", ordered_json::array({after_group()})}}}});
  CHECK(read_text(h.settings) == user_settings);
  CHECK(h.setup({"--project", project.string(), "--remove"}).status == 0);
  CHECK(read_text(file) == "{}\n");
  CHECK(read_text(h.settings) == user_settings);

  // No HOME: only --project can say where.
  const cli_result no_home = cli_process({"setup", "gemini"}, {}, {"HOME"}).finish(std::chrono::seconds(20));
  CHECK(no_home.status == 2);
  CHECK(has(no_home.err, "HOME is not set"));
}

TEST_CASE("setup gemini: invalid JSON, hooks of another shape, and a symlink are refused, the file untouched") {
  gemini_home h;
  const std::vector<std::pair<std::string, std::string>> refused = {
      {"{\n  // Gemini allows comments, handoff does not edit them\n  \"ui\": {}\n}\n", "is not valid JSON"},
      {"{\"hooks\": \n", "is not valid JSON"},
      {"[1, 2]\n", "expected a JSON object"},
      {"{\"hooks\": []}\n", "\"hooks\" is not an object"},
      {"{\"hooks\": {\"AfterTool\": {\"matcher\": \"invoke_agent\"}}}\n", "\"hooks.AfterTool\" is not an array"},
  };
  for (const auto& [text, why] : refused) {
    write_text(h.settings, text);
    for (const std::vector<std::string>& args : {std::vector<std::string>{}, {"--dry-run"}, {"--remove"}}) {
      const cli_result r = h.setup(args);
      CHECK(r.status == 1);
      CHECK_MESSAGE(has(r.err, "setup gemini: " + h.settings.string()), r.err);
      CHECK_MESSAGE(has(r.err, why), r.err);
      CHECK(r.out.empty());
      CHECK(read_text(h.settings) == text);
    }
  }
  fs::remove(h.settings);
  write_text(h.dir / "real.json", "{\"ui\": {}}\n");
  fs::create_symlink(h.dir / "real.json", h.settings);
  const cli_result r = h.setup();
  CHECK(r.status == 1);
  CHECK_MESSAGE(has(r.err, "symlink"), r.err);
  CHECK(fs::is_symlink(h.settings));
  CHECK(read_text(h.dir / "real.json") == "{\"ui\": {}}\n");
}
