// `handoff hook cline` (client/cli/harness/cline/hook.hpp) against a real handoffd, fed the inputs
// handoff's cline plugin gives it, and `handoff setup cline` on real files. That cline itself loads
// the plugin and gives its model what the hook prints: tests/cline/cline.test.mjs.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <regex>
#include <string>
#include <thread>
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
using handoff::test::write_text;
using nlohmann::json;

namespace {

constexpr std::size_t cline_cut = 8000;  // cline's cut on a tool result's strings, characters

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::vector<std::string> hook_env(const std::string& socket, std::vector<std::string> extra = {}) {
  extra.push_back("HANDOFF_SOCKET=" + socket);
  extra.push_back("HANDOFF_AUTOSTART=0");
  extra.push_back("HANDOFF_CONTEXT_WINDOW");
  extra.push_back("HANDOFF_HOOK_SIBLINGS_WAIT_MS");
  return extra;
}

// The plugin's input for a finished spawn_agent call.
json call_input(const std::string& agent, const std::string& call, const std::string& text,
                std::vector<std::string> siblings = {}) {
  return {{"event", "completed"}, {"agentId", agent}, {"callId", call}, {"title", "audit the parser"},
          {"text", text}, {"siblings", siblings}};
}

cli_result hook(const json& input, const std::vector<std::string>& env) {
  return cli_process({"hook", "cline"}, input.dump(), env).finish(std::chrono::seconds(40));
}

std::vector<fs::path> artifacts_in(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".txt") out.push_back(e.path());
  return out;
}

// The read_files pages that read the omitted lines back: the footer's, or (a footer with more
// than it lists) those its `handoff read --reader cline --plan` command prints, run here.
std::vector<std::pair<std::size_t, std::size_t>> pages_of(const std::string& out) {
  std::string calls = out;
  std::smatch plan;
  if (std::regex_search(out, plan, std::regex("read --reader cline --plan (\\d+-\\d+) '([^']+)'"))) {
    const cli_result listed = cli_process({"read", "--reader", "cline", "--plan", plan[1].str(), plan[2].str()}, {}, {})
                                  .finish(std::chrono::seconds(20));
    REQUIRE(listed.status == 0);
    CHECK(listed.out.size() <= cline_cut);  // run_commands shows it whole
    calls = listed.out;
  }
  std::vector<std::pair<std::size_t, std::size_t>> pages;
  const std::regex page("read_files start_line=(\\d+) end_line=(\\d+)");
  for (auto it = std::sregex_iterator(calls.begin(), calls.end(), page); it != std::sregex_iterator(); ++it)
    pages.emplace_back(std::stoul((*it)[1].str()), std::stoul((*it)[2].str()));
  return pages;
}

// Every page is at most cline's cut once read_files shows it (its lines, the "\n" between them
// and a "N | " prefix of the widest number's width each), and together they are exactly the
// omitted lines.
void check_pages(const std::string& out, const std::string& full) {
  std::vector<std::string> lines;
  std::size_t at = 0;
  for (std::size_t nl; (nl = full.find('\n', at)) != std::string::npos; at = nl + 1) lines.push_back(full.substr(at, nl - at));
  lines.push_back(full.substr(at));
  std::smatch omitted;
  REQUIRE(std::regex_search(out, omitted, std::regex("omitted lines (\\d+)-(\\d+)")));
  std::size_t next = std::stoul(omitted[1].str());
  const std::vector<std::pair<std::size_t, std::size_t>> pages = pages_of(out);
  REQUIRE_FALSE(pages.empty());
  for (const auto& [first, last] : pages) {
    REQUIRE(first == next);
    REQUIRE(first <= last);
    REQUIRE(last <= lines.size());
    const std::size_t width = std::to_string(last).size();
    std::size_t shown = 0;
    for (std::size_t n = first; n <= last; ++n) shown += (n > first ? 1 : 0) + width + 3 + lines[n - 1].size();
    CHECK_MESSAGE(shown <= cline_cut, "lines " << first << "-" << last << ": " << shown);
    next = last + 1;
  }
  CHECK(next == std::stoul(omitted[2].str()) + 1);
}

}  // namespace

TEST_CASE("hook cline: a 171,016-byte answer is bounded under cline's 8,000-character cut, read_files pages for the rest") {
  daemon_process daemon;
  const std::string answer = long_answer(3001, 57);
  REQUIRE(answer.size() == 171016);
  const cli_result r = hook(call_input("agent_parent", "call_1", answer), hook_env(daemon.socket()));
  REQUIRE(r.status == 0);
  CHECK(r.out.starts_with("finding 0001 "));
  CHECK(r.out.size() <= cline_cut);
  CHECK(has(r.out, "VERDICT: ship it"));
  const std::vector<fs::path> artifacts = artifacts_in(daemon.artifact_dir());
  REQUIRE(artifacts.size() == 1);
  CHECK(read_text(artifacts[0]) == answer);
  CHECK(has(r.out, artifacts[0].string()));  // "Full text: PATH", or the plan command on it
  check_pages(r.out, answer);
}

TEST_CASE("hook cline: an answer that fits, alone, prints nothing (cline's result stands byte for byte) and stores nothing") {
  daemon_process daemon;
  const cli_result r = hook(call_input("agent_parent", "call_1", "short\n\nVERDICT: ok"), hook_env(daemon.socket()));
  CHECK(r.status == 0);
  CHECK(r.out.empty());
  CHECK(fs::is_empty(daemon.artifact_dir()));
  // 9 KB: within handoff's 16 KiB, but over cline's cut: bounded.
  const cli_result over = hook(call_input("agent_parent", "call_2", long_answer(160, 57)), hook_env(daemon.socket()));
  CHECK(over.out.size() <= cline_cut);
  CHECK(has(over.out, "VERDICT: ship it"));
  CHECK(has(over.out, "read_files start_line="));
}

TEST_CASE("hook cline: with handoffd down the hook cuts head and tail itself under cline's cut, a private copy named, within cline's hook limit") {
  temp_dir dir{"handoff-cline-down"};
  const std::vector<std::string> env =
      hook_env((dir / "no.sock").string(), {"XDG_CACHE_HOME=" + (dir / "cache").string()});
  const std::string answer = long_answer(3001, 57);
  const auto started = std::chrono::steady_clock::now();
  const cli_result r = hook(call_input("agent_parent", "call_1", answer), env);
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::milliseconds(2500));
  REQUIRE(r.status == 0);
  CHECK(r.out.starts_with("finding 0001 "));
  CHECK(r.out.size() <= cline_cut);
  CHECK(has(r.out, "VERDICT: ship it"));
  const std::string last = r.out.substr(r.out.rfind('\n') + 1);
  CHECK_MESSAGE(last.starts_with("[handoff: handoff's daemon was not reached ("), last);
  std::smatch m;
  REQUIRE(std::regex_search(last, m, std::regex("the full text \\(171,016 bytes\\) is in (\\S+)\\]$")));
  const fs::path copy = m[1].str();
  CHECK(copy.parent_path() == dir / "cache" / "handoff" / "unbounded");
  CHECK(read_text(copy) == answer);
  struct stat st {};
  REQUIRE(::stat(copy.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  CHECK(has(r.out, "'" + copy.string() + "'"));  // the plan command reads it
  check_pages(r.out, answer);

  // One that fits, with a sibling (so the daemon was needed): as it is, and the line.
  const cli_result passed = hook(call_input("agent_parent", "call_3", "short\n\nVERDICT: ok", {"call_4"}), env);
  CHECK(passed.out.starts_with("short\n\nVERDICT: ok\n\n[handoff: handoff's daemon was not reached ("));
  CHECK(passed.out.ends_with("; the result passes whole]"));
}

TEST_CASE("hook cline: four siblings share one budget from the parent's context use, each under cline's cut") {
  daemon_process daemon;
  const std::vector<std::string> calls = {"call_a", "call_b", "call_c", "call_d"};
  // Each hook in a thread of its own: a hook waits for its siblings, which must be fed meanwhile.
  std::vector<cli_result> results(calls.size());
  std::vector<std::thread> running;
  for (std::size_t i = 0; i < calls.size(); ++i) {
    std::vector<std::string> siblings;
    for (const std::string& c : calls)
      if (c != calls[i]) siblings.push_back(c);
    json input = call_input("agent_parent", calls[i], long_answer(700, 57, std::string(1, static_cast<char>('A' + i)) + "-"), siblings);
    // 192,000 of 200,000 tokens: half the rest at 4 bytes a token, 16,000 bytes, for the four.
    input["tokens"] = 192000;
    input["contextWindow"] = 200000;
    running.emplace_back([&results, i, input, env = hook_env(daemon.socket())] { results[i] = hook(input, env); });
  }
  for (std::thread& t : running) t.join();
  std::size_t total = 0;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const cli_result& r = results[i];
    REQUIRE(r.status == 0);
    CHECK(r.out.size() <= cline_cut);
    CHECK(r.out.starts_with(std::string(1, static_cast<char>('A' + i)) + "-finding 0001"));
    CHECK(has(r.out, std::string(1, static_cast<char>('A' + i)) + "-VERDICT: ship it"));
    total += r.out.size();
  }
  CHECK(total <= 16000 + 4 * 512);  // alone, each would take up to 8,000: 32,000
}

TEST_CASE("hook cline: a sibling that never finishes is waited for at most cline's budget, well within its 3-second hook limit") {
  daemon_process daemon;
  const auto started = std::chrono::steady_clock::now();
  const cli_result r = hook(call_input("agent_parent", "call_ok", long_answer(700, 57), {"call_slow"}),
                            hook_env(daemon.socket(), {"HANDOFF_HOOK_SIBLINGS_WAIT_MS=600000"}));
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::milliseconds(2500));
  REQUIRE(r.status == 0);
  CHECK(has(r.out, "VERDICT: ship it"));
  CHECK(r.out.size() <= cline_cut);
  // A failed call prints nothing and is cancelled, so no later wait waits for it.
  const cli_result failed = hook(json{{"event", "failed"}, {"agentId", "agent_parent"}, {"callId", "call_slow"}},
                                 hook_env(daemon.socket()));
  CHECK(failed.status == 0);
  CHECK(failed.out.empty());
}

TEST_CASE("hook cline: input that is not the plugin's prints nothing") {
  daemon_process daemon;
  for (const std::string& input : {std::string("not json"), std::string("[]"), json{{"agentId", 3}}.dump(),
                                   call_input("", "call_1", long_answer(700, 57)).dump()}) {
    const cli_result r = cli_process({"hook", "cline"}, input, hook_env(daemon.socket())).finish(std::chrono::seconds(20));
    CHECK(r.status == 0);
    CHECK(r.out.empty());
  }
}

namespace {

struct cline_home {
  temp_dir dir{"handoff-setup-cline"};
  fs::path home = dir / "home";
  fs::path plugin = home / ".cline" / "plugins" / "handoff.js";

  cli_result setup(std::vector<std::string> args = {}, std::vector<std::string> env = {}) const {
    args.insert(args.begin(), {"setup", "cline"});
    env.insert(env.begin(), {"HOME=" + home.string(), "CLINE_DIR"});  // the caller's after: they win
    return cli_process(args, {}, env).finish(std::chrono::seconds(20));
  }
};

}  // namespace

TEST_CASE("setup cline: the plugin beside the user's own, idempotent, and taken out exactly") {
  cline_home c;
  const fs::path mine = c.plugin.parent_path() / "mine.js";
  write_text(mine, "export default { name: \"mine\", manifest: { capabilities: [\"hooks\"] } };\n");
  const cli_result dry = c.setup({"--dry-run"});
  CHECK(dry.status == 0);
  CHECK_FALSE(fs::exists(c.plugin));

  REQUIRE(c.setup().status == 0);
  const std::string source = read_text(c.plugin);
  CHECK(source.starts_with("// handoff's cline plugin"));
  CHECK(has(source, json(fs::canonical(HANDOFF_CLI_PATH).string()).dump()));
  CHECK(has(source, "afterTool"));
  CHECK(has(source, "\"hook\", \"cline\""));

  const cli_result again = c.setup();
  CHECK(again.status == 0);
  CHECK(has(again.out, "nothing to change"));
  CHECK(read_text(c.plugin) == source);

  CHECK(c.setup({"--remove", "--dry-run"}).status == 0);
  CHECK(fs::exists(c.plugin));
  const cli_result removed = c.setup({"--remove"});
  CHECK(removed.status == 0);
  CHECK_FALSE(fs::exists(c.plugin));
  CHECK(fs::exists(mine));
  CHECK(c.setup({"--remove"}).status == 0);  // nothing left to remove
}

TEST_CASE("setup cline: a file of someone else's at the plugin's path, or a symlink, is refused, nothing written") {
  cline_home c;
  write_text(c.plugin, "// my own plugin\n");
  for (const std::vector<std::string>& args : {std::vector<std::string>{}, std::vector<std::string>{"--remove"}}) {
    const cli_result r = c.setup(args);
    CHECK(r.status == 1);
    CHECK_MESSAGE(has(r.err, "not handoff's plugin"), r.err);
    CHECK(read_text(c.plugin) == "// my own plugin\n");
  }
  fs::remove(c.plugin);
  write_text(c.dir / "real.js", "// handoff's cline plugin, an old one\n");
  fs::create_symlink(c.dir / "real.js", c.plugin);
  const cli_result r = c.setup();
  CHECK(r.status == 1);
  CHECK(has(r.err, "symlink"));
  CHECK(c.setup({"--remove"}).status == 1);
  CHECK(read_text(c.dir / "real.js") == "// handoff's cline plugin, an old one\n");
  CHECK(fs::is_symlink(c.plugin));
}

TEST_CASE("setup cline: CLINE_DIR, or --cline-dir DIR, is cline's directory") {
  cline_home c;
  const fs::path env_dir = c.dir / "cline-env";
  REQUIRE(c.setup({}, {"CLINE_DIR=" + env_dir.string()}).status == 0);
  CHECK(fs::exists(env_dir / "plugins" / "handoff.js"));
  const fs::path option_dir = c.dir / "cline-option";
  REQUIRE(c.setup({"--cline-dir", option_dir.string()}).status == 0);
  CHECK(fs::exists(option_dir / "plugins" / "handoff.js"));
  CHECK_FALSE(fs::exists(c.plugin));
}
