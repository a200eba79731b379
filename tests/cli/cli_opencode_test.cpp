// `handoff hook opencode` (client/cli/harness/opencode/hook.hpp) against a real handoffd, fed the
// inputs handoff's plugin gives it, and `handoff setup opencode` on real config files. That
// opencode itself loads the plugin and gives its model what the hook prints:
// tests/opencode/opencode.test.mjs.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_process.hpp"
#include "support/daemon_process.hpp"
#include "support/daemon_status.hpp"
#include "support/temp_dir.hpp"
#include "support/text_files.hpp"

namespace fs = std::filesystem;
using handoff::test::cli_process;
using handoff::test::cli_result;
using handoff::test::daemon_process;
using handoff::test::temp_dir;
using handoff::test::long_answer;
using handoff::test::read_text;
using handoff::test::write_text;
using nlohmann::json;

namespace {

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::string framed(const std::string& answer) {
  return "<task id=\"ses_child1\" state=\"completed\">\n<task_result>\n" + answer + "\n</task_result>\n</task>";
}

std::vector<std::string> hook_env(const std::string& socket, std::vector<std::string> extra = {}) {
  extra.push_back("HANDOFF_SOCKET=" + socket);
  extra.push_back("HANDOFF_AUTOSTART=0");
  extra.push_back("HANDOFF_CONTEXT_WINDOW");
  return extra;
}

// The plugin's input for a finished task whose full output opencode saved at `saved` (cut: the
// output is opencode's head only), or whose output is `output` itself.
json task_input(const std::string& session, const std::string& call, const std::string& output,
                const std::string& saved = "", std::vector<std::string> siblings = {}) {
  json in = {{"event", "completed"}, {"sessionID", session}, {"callID", call}, {"title", "audit"},
             {"output", output}, {"siblings", siblings}};
  if (!saved.empty()) in["outputPath"] = saved;
  return in;
}

cli_result hook(const json& input, const std::vector<std::string>& env) {
  return cli_process({"hook", "opencode"}, input.dump(), env).finish(std::chrono::seconds(40));
}

const std::string open_frame = "<task id=\"ses_child1\" state=\"completed\">\n<task_result>\n";
const std::string close_frame = "\n</task_result>\n</task>";

}  // namespace

TEST_CASE("hook opencode: a 171,016-byte answer cut by opencode is bounded from its saved full copy, in opencode's frame") {
  daemon_process daemon;
  temp_dir dir{"handoff-opencode-hook"};
  const std::string answer = long_answer(3001, 57);
  REQUIRE(answer.size() == 171016);
  const fs::path saved = dir / "tool_1";
  write_text(saved, framed(answer));
  const std::string cut = framed(answer).substr(0, 51200) + "\n\n...120000 bytes truncated...";
  const cli_result r = hook(task_input("ses_parent", "call_1", cut, saved.string()), hook_env(daemon.socket()));
  REQUIRE(r.status == 0);
  CHECK(r.out.starts_with(open_frame + "finding 0001 "));
  CHECK(r.out.ends_with(close_frame));
  CHECK(r.out.size() <= 16 * 1024);
  CHECK(has(r.out, "VERDICT: ship it"));
  CHECK(has(r.out, "read offset="));
  CHECK_FALSE(has(r.out, "truncated..."));
  std::vector<fs::path> artifacts;
  for (const auto& e : fs::directory_iterator(daemon.artifact_dir()))
    if (e.path().extension() == ".txt") artifacts.push_back(e.path());
  REQUIRE(artifacts.size() == 1);
  CHECK(read_text(artifacts[0]) == answer);
  CHECK(has(r.out, artifacts[0].string()));
}

TEST_CASE("hook opencode: an answer that fits, alone, prints nothing (the output stands byte for byte) and stores nothing") {
  daemon_process daemon;
  const cli_result r = hook(task_input("ses_parent", "call_1", framed("short\n\nVERDICT: ok")), hook_env(daemon.socket()));
  CHECK(r.status == 0);
  CHECK(r.out.empty());
  CHECK(fs::is_empty(daemon.artifact_dir()));
}

TEST_CASE("hook opencode: with handoffd down the hook cuts head and tail itself - from opencode's saved copy when it cut the output, else with a private copy") {
  temp_dir dir{"handoff-opencode-down"};
  const std::vector<std::string> env =
      hook_env((dir / "no.sock").string(), {"XDG_CACHE_HOME=" + (dir / "cache").string()});
  const std::string answer = long_answer(3001, 57);

  // opencode cut it: its saved copy holds the whole output, frame and all, and is the one named.
  const fs::path saved = dir / "tool_1";
  write_text(saved, framed(answer));
  const std::string cut = framed(answer).substr(0, 51200) + "\n\n...120000 bytes truncated...";
  const cli_result r = hook(task_input("ses_parent", "call_1", cut, saved.string()), env);
  REQUIRE(r.status == 0);
  CHECK(r.out.starts_with(open_frame + "finding 0001 "));
  CHECK(r.out.size() <= 16 * 1024);
  CHECK(has(r.out, "VERDICT: ship it"));
  CHECK_FALSE(has(r.out, "truncated..."));
  CHECK(has(r.out, "Full text: " + saved.string()));
  CHECK(has(r.out, "read offset="));
  const std::string last = r.out.substr(r.out.rfind('\n') + 1);
  CHECK_MESSAGE(last.starts_with("[handoff: handoff's daemon was not reached ("), last);
  CHECK(last.ends_with("; the head and tail above were cut by the hook itself, the full text (171,094 bytes) is in " +
                       saved.string() + "]"));
  CHECK(read_text(saved) == framed(answer));  // opencode's copy, untouched
  CHECK_FALSE(fs::exists(dir / "cache" / "handoff" / "unbounded"));

  // opencode passed it whole (22 KB): the answer's head and tail inside opencode's frame, the
  // answer itself in a 0600 copy in a 0700 directory of the user's cache, outside the store.
  const std::string mid = long_answer(400, 57);
  const cli_result whole = hook(task_input("ses_parent", "call_2", framed(mid)), env);
  REQUIRE(whole.status == 0);
  CHECK(whole.out.starts_with(open_frame + "finding 0001 "));
  CHECK(whole.out.ends_with("]" + close_frame));
  CHECK(whole.out.size() <= 16 * 1024);
  CHECK(has(whole.out, "VERDICT: ship it"));
  std::smatch m;
  REQUIRE(std::regex_search(whole.out, m, std::regex("is in (\\S+)\\]\n</task_result>")));
  const fs::path copy = m[1].str();
  CHECK(copy.parent_path() == dir / "cache" / "handoff" / "unbounded");
  CHECK(read_text(copy) == mid);
  struct stat st {};
  REQUIRE(::stat(copy.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  REQUIRE(::stat(copy.parent_path().c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);
  CHECK(has(whole.out, "Full text: " + copy.string()));

  // One that fits, with a sibling (so the daemon was needed): as opencode made it, and the line.
  const std::string small = framed("short\n\nVERDICT: ok");
  const cli_result passed = hook(task_input("ses_parent", "call_3", small, "", {"call_4"}), env);
  CHECK(passed.out.starts_with(small + "\n\n[handoff: handoff's daemon was not reached ("));
  CHECK(passed.out.ends_with("; the result passes whole]"));
}

TEST_CASE("hook opencode: opencode's saved copy unreadable - the output passes with one line") {
  temp_dir dir{"handoff-opencode-unreadable"};
  const std::string output = framed(long_answer(400, 57));
  daemon_process daemon;
  const cli_result unreadable =
      hook(task_input("ses_parent", "call_2", output, (dir / "missing").string()), hook_env(daemon.socket()));
  CHECK(unreadable.status == 0);
  CHECK(unreadable.out.starts_with(output + "\n\n[handoff: this result was not bounded (opencode's full copy at "));
}

TEST_CASE("hook opencode: four siblings finishing together share one 48 KiB budget") {
  daemon_process daemon;
  const std::vector<std::string> calls = {"call_a", "call_b", "call_c", "call_d"};
  // Each hook in a thread of its own: a hook waits for its siblings, which must be fed and read meanwhile.
  std::vector<cli_result> results(calls.size());
  std::vector<std::thread> running;
  for (std::size_t i = 0; i < calls.size(); ++i) {
    std::vector<std::string> siblings;
    for (const std::string& c : calls)
      if (c != calls[i]) siblings.push_back(c);
    const std::string tag = std::string(1, static_cast<char>('A' + i)) + "-";
    const json input = task_input("ses_parent", calls[i], framed(long_answer(700, 57, tag)), "", siblings);
    running.emplace_back([&results, i, input, env = hook_env(daemon.socket())] { results[i] = hook(input, env); });
  }
  for (std::thread& t : running) t.join();
  std::size_t total = 0;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const cli_result& r = results[i];
    REQUIRE(r.status == 0);
    CHECK(r.out.starts_with(open_frame));
    CHECK(has(r.out, std::string(1, static_cast<char>('A' + i)) + "-VERDICT: ship it"));
    total += r.out.size();
  }
  CHECK(total <= 48 * 1024);  // alone, each would take 16 KiB: 64 KiB
}

TEST_CASE("hook opencode: a sibling that failed is cancelled, and the other's wait ends without it") {
  daemon_process daemon;
  cli_result r;
  const json input = task_input("ses_parent", "call_ok", framed(long_answer(700, 57)), "", {"call_bad"});
  std::thread waiting([&r, input, env = hook_env(daemon.socket(), {"HANDOFF_HOOK_SIBLINGS_WAIT_MS=60000"})] {
    r = hook(input, env);
  });
  // It has completed call_ok and sleeps in a wait for call_bad.
  REQUIRE(handoff::test::waits_asleep(daemon.socket(), 1));
  const auto failed_at = std::chrono::steady_clock::now();
  const cli_result failed =
      hook(json{{"event", "failed"}, {"sessionID", "ses_parent"}, {"callID", "call_bad"}}, hook_env(daemon.socket()));
  CHECK(failed.status == 0);
  CHECK(failed.out.empty());
  waiting.join();
  CHECK(std::chrono::steady_clock::now() - failed_at < std::chrono::seconds(10));
  REQUIRE(r.status == 0);
  CHECK(has(r.out, "VERDICT: ship it"));
  CHECK(r.out.size() <= 16 * 1024);
}

TEST_CASE("hook opencode: the parent's tokens against its window shrink the budget") {
  daemon_process daemon;
  const std::string output = framed(long_answer(700, 57));
  json roomy = task_input("ses_p1", "call_1", output);
  const cli_result free = hook(roomy, hook_env(daemon.socket()));
  json full = task_input("ses_p2", "call_1", output);
  full["tokens"] = {{"input", 150000}, {"output", 2000}, {"reasoning", 0}, {"cache", {{"read", 40000}, {"write", 0}}}};
  full["contextWindow"] = 200000;
  const cli_result tight = hook(full, hook_env(daemon.socket()));
  REQUIRE(free.status == 0);
  REQUIRE(tight.status == 0);
  CHECK(has(tight.out, "VERDICT: ship it"));
  CHECK(tight.out.size() < free.out.size());
}

namespace {

struct opencode_config {
  temp_dir dir{"handoff-setup-opencode"};
  fs::path xdg = dir / "xdg";
  fs::path config = xdg / "opencode" / "opencode.json";
  fs::path plugin = xdg / "opencode" / "handoff" / "opencode-plugin.js";

  fs::path store = dir / "store";

  cli_result setup(std::vector<std::string> args = {}) const {
    args.insert(args.begin(), {"setup", "opencode", "--artifact-dir", store.string()});
    return cli_process(args, {}, {"XDG_CONFIG_HOME=" + xdg.string(), "HOME=" + (dir / "home").string()})
        .finish(std::chrono::seconds(20));
  }
};

}  // namespace

TEST_CASE("setup opencode: the plugin and its entry, kept beside the user's own, idempotent, and taken out exactly") {
  opencode_config c;
  const std::string before = "{\n  \"model\": \"anthropic/claude\",\n  \"plugin\": [\n    \"opencode-wakatime\"\n  ]\n}\n";
  write_text(c.config, before);
  const cli_result dry = c.setup({"--dry-run"});
  CHECK(dry.status == 0);
  CHECK(read_text(c.config) == before);
  CHECK_FALSE(fs::exists(c.plugin));

  REQUIRE(c.setup().status == 0);
  const json after = json::parse(read_text(c.config));
  CHECK(after["model"] == "anthropic/claude");
  CHECK(after["plugin"] == json::array({"opencode-wakatime", c.plugin.string()}));
  CHECK(after["permission"] == json{{"external_directory", {{c.store.string() + "/*", "allow"}}}});
  const std::string source = read_text(c.plugin);
  CHECK(source.starts_with("// handoff's opencode plugin"));
  CHECK(has(source, json(fs::canonical(HANDOFF_CLI_PATH).string()).dump()));
  CHECK(has(source, "\"tool.execute.after\""));

  const std::string installed = read_text(c.config);
  const cli_result again = c.setup();
  CHECK(again.status == 0);
  CHECK(has(again.out, "nothing to change"));
  CHECK(read_text(c.config) == installed);

  const cli_result removed = c.setup({"--remove"});
  CHECK(removed.status == 0);
  CHECK(json::parse(read_text(c.config)) == json::parse(before));
  CHECK_FALSE(fs::exists(c.plugin));
}

TEST_CASE("setup opencode: a permission the user set as one action stands, and the user's own rules are kept") {
  opencode_config c;
  write_text(c.config, "{\"permission\": {\"external_directory\": \"deny\"}}\n");
  REQUIRE(c.setup().status == 0);
  CHECK(json::parse(read_text(c.config))["permission"] == json{{"external_directory", "deny"}});
  write_text(c.config, "{\"permission\": {\"edit\": \"ask\", \"external_directory\": {\"/srv/*\": \"allow\"}}}\n");
  REQUIRE(c.setup().status == 0);
  CHECK(json::parse(read_text(c.config))["permission"]["external_directory"] ==
        json{{"/srv/*", "allow"}, {c.store.string() + "/*", "allow"}});
  REQUIRE(c.setup({"--remove"}).status == 0);
  CHECK(json::parse(read_text(c.config)) ==
        json::parse("{\"permission\": {\"edit\": \"ask\", \"external_directory\": {\"/srv/*\": \"allow\"}}}"));
}

TEST_CASE("setup opencode: a config with comments, a plugin that is not a list, a symlink or invalid JSON is refused, nothing written") {
  opencode_config c;
  const std::vector<std::string> refused = {
      "{\n  // my model\n  \"model\": \"x\"\n}\n", "{\"plugin\": \"one\"}\n", "{\"model\": \n"};
  for (const std::string& text : refused) {
    write_text(c.config, text);
    const cli_result r = c.setup();
    CHECK(r.status == 1);
    CHECK_MESSAGE(has(r.err, "setup opencode: " + c.config.string()), r.err);
    CHECK(read_text(c.config) == text);
    CHECK_FALSE(fs::exists(c.plugin));
  }
  fs::remove(c.config);
  write_text(c.dir / "real.json", "{}\n");
  fs::create_symlink(c.dir / "real.json", c.config);
  const cli_result r = c.setup();
  CHECK(r.status == 1);
  CHECK(has(r.err, "symlink"));
  CHECK(read_text(c.dir / "real.json") == "{}\n");
}

TEST_CASE("setup opencode --project DIR: DIR/opencode.json and the plugin in DIR/.opencode/handoff/") {
  opencode_config c;
  const fs::path project = c.dir / "project";
  fs::create_directories(project);
  const cli_result r = c.setup({"--project", project.string()});
  REQUIRE(r.status == 0);
  const fs::path plugin = project / ".opencode" / "handoff" / "opencode-plugin.js";
  CHECK(fs::exists(plugin));
  CHECK(json::parse(read_text(project / "opencode.json"))["plugin"] == json::array({plugin.string()}));
  CHECK_FALSE(fs::exists(c.config));
}

namespace {

// `handoff setup kilo`: Kilo Code's CLI, an opencode fork, in ${XDG_CONFIG_HOME}/kilo/.
struct kilo_config {
  temp_dir dir{"handoff-setup-kilo"};
  fs::path xdg = dir / "xdg";
  fs::path kilo = xdg / "kilo";
  fs::path plugin = kilo / "handoff" / "opencode-plugin.js";
  fs::path store = dir / "store";

  cli_result setup(std::vector<std::string> args = {}) const {
    args.insert(args.begin(), {"setup", "kilo", "--artifact-dir", store.string()});
    return cli_process(args, {}, {"XDG_CONFIG_HOME=" + xdg.string(), "HOME=" + (dir / "home").string()})
        .finish(std::chrono::seconds(20));
  }
  json config(const char* name) const { return json::parse(read_text(kilo / name)); }
};

}  // namespace

TEST_CASE("setup kilo: with no config, kilo.json and the plugin beside it in Kilo's folder, nothing in opencode's, idempotent, and --remove takes both out") {
  kilo_config c;
  const cli_result dry = c.setup({"--dry-run"});
  CHECK(dry.status == 0);
  CHECK_FALSE(fs::exists(c.kilo));

  const cli_result r = c.setup();
  REQUIRE_MESSAGE(r.status == 0, r.err);
  CHECK(has(r.out, "setup kilo: wrote handoff's entries to " + (c.kilo / "kilo.json").string()));
  CHECK(c.config("kilo.json")["plugin"] == json::array({c.plugin.string()}));
  CHECK(c.config("kilo.json")["permission"] == json{{"external_directory", {{c.store.string() + "/*", "allow"}}}});
  CHECK(read_text(c.plugin).starts_with("// handoff's opencode plugin"));
  CHECK_FALSE(fs::exists(c.xdg / "opencode"));

  const std::string installed = read_text(c.kilo / "kilo.json");
  CHECK(has(c.setup().out, "nothing to change"));
  CHECK(read_text(c.kilo / "kilo.json") == installed);

  REQUIRE(c.setup({"--remove"}).status == 0);
  CHECK(c.config("kilo.json") == json::object());
  CHECK_FALSE(fs::exists(c.plugin));
}

TEST_CASE("setup kilo: the first config Kilo reads that exists gets the entries (kilo.jsonc, kilo.json, opencode.jsonc, opencode.json), and the others lose any of handoff's") {
  kilo_config c;
  // An opencode.json copied from opencode's own setup, with a stale entry of handoff's.
  write_text(c.kilo / "opencode.json", "{\"plugin\": [\"/old/handoff/opencode-plugin.js\", \"other\"], \"theme\": \"t\"}\n");
  REQUIRE(c.setup().status == 0);
  // The one that exists; handoff's stale entry replaced where it stood.
  CHECK(c.config("opencode.json")["plugin"] == json::array({c.plugin.string(), "other"}));
  CHECK(c.config("opencode.json")["theme"] == "t");
  CHECK_FALSE(fs::exists(c.kilo / "kilo.json"));

  // The user makes a kilo.jsonc (no comments): it comes first; opencode.json keeps only its own.
  write_text(c.kilo / "kilo.jsonc", "{\"model\": \"m\"}\n");
  const cli_result moved = c.setup();
  REQUIRE_MESSAGE(moved.status == 0, moved.err);
  CHECK(c.config("kilo.jsonc")["plugin"] == json::array({c.plugin.string()}));
  CHECK(c.config("kilo.jsonc")["model"] == "m");
  CHECK(c.config("opencode.json") == json{{"plugin", {"other"}}, {"theme", "t"}});

  // A config with comments elsewhere holds none of handoff's: left as it is.
  const std::string commented = "{\n  // mine\n  \"model\": \"x\"\n}\n";
  write_text(c.kilo / "opencode.jsonc", commented);
  REQUIRE(c.setup().status == 0);
  CHECK(read_text(c.kilo / "opencode.jsonc") == commented);

  REQUIRE(c.setup({"--remove"}).status == 0);
  CHECK(c.config("kilo.jsonc") == json{{"model", "m"}});
  CHECK(c.config("opencode.json") == json{{"plugin", {"other"}}, {"theme", "t"}});
  CHECK(read_text(c.kilo / "opencode.jsonc") == commented);
  CHECK_FALSE(fs::exists(c.plugin));
}

TEST_CASE("setup kilo: the config it would edit with comments, or a symlink, is refused, nothing written") {
  kilo_config c;
  const std::string commented = "{\n  // mine\n  \"model\": \"x\"\n}\n";
  write_text(c.kilo / "kilo.jsonc", commented);
  const cli_result r = c.setup();
  CHECK(r.status == 1);
  CHECK_MESSAGE(has(r.err, "setup kilo: " + (c.kilo / "kilo.jsonc").string()), r.err);
  CHECK(read_text(c.kilo / "kilo.jsonc") == commented);
  CHECK_FALSE(fs::exists(c.plugin));

  fs::remove(c.kilo / "kilo.jsonc");
  write_text(c.dir / "real.json", "{}\n");
  fs::create_symlink(c.dir / "real.json", c.kilo / "kilo.json");
  const cli_result linked = c.setup();
  CHECK(linked.status == 1);
  CHECK(has(linked.err, "symlink"));
  CHECK(read_text(c.dir / "real.json") == "{}\n");
  CHECK_FALSE(fs::exists(c.kilo / "opencode.json"));
}

TEST_CASE("setup kilo --project DIR: the project's config Kilo reads, the plugin in DIR/.opencode/handoff/") {
  kilo_config c;
  const fs::path project = c.dir / "project";
  write_text(project / "opencode.json", "{\"model\": \"p\"}\n");
  REQUIRE(c.setup({"--project", project.string()}).status == 0);
  const fs::path plugin = project / ".opencode" / "handoff" / "opencode-plugin.js";
  CHECK(fs::exists(plugin));
  CHECK(json::parse(read_text(project / "opencode.json"))["plugin"] == json::array({plugin.string()}));
  CHECK_FALSE(fs::exists(project / "kilo.json"));
  CHECK_FALSE(fs::exists(c.kilo));
}
