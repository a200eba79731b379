// The JavaScript the hook core gives cline's and opencode's plugins (cli/harness/core/plugin_js.hpp):
// the plugins `handoff setup` writes have every slot filled and parse under node (on PATH);
// runHook, run by node against a stand-in hook, resolves {out} or {error} and kills a hook that
// outlasts its time; fill_slots refuses a slot without a value. That cline and opencode load the
// plugins and run the real hook: tests/cline/cline.test.mjs, tests/opencode/opencode.test.mjs.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <regex>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/harness/core/plugin_js.hpp"
#include "cli_process.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"
#include "support/text_files.hpp"

namespace fs = std::filesystem;
using handoff::cli::hook_core::fill_slots;
using handoff::cli::hook_core::js_string;
using handoff::cli::hook_core::run_hook_js;
using handoff::test::cli_process;
using handoff::test::cli_result;
using handoff::test::read_text;
using handoff::test::temp_dir;
using handoff::test::write_text;
using nlohmann::json;

namespace {

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

struct node_result {
  int status = -1;
  std::string output;  // standard output and error
};

// `node ARGS...`, node from PATH, at most 60 s.
node_result node(std::vector<std::string> args, const fs::path& log) {
  args.insert(args.begin(), {"/usr/bin/env", "node"});
  handoff::test::process p(handoff::test::logged(std::move(args), log));
  const int status = p.wait(std::chrono::seconds(60));
  return {status, handoff::test::read_log(log)};
}

// The @NAME@ slots left in a plugin's source.
std::vector<std::string> unfilled_slots(const std::string& source) {
  static const std::regex slot("@[A-Z][A-Z0-9_]*@");
  std::vector<std::string> out;
  for (auto it = std::sregex_iterator(source.begin(), source.end(), slot); it != std::sregex_iterator(); ++it)
    out.push_back(it->str());
  return out;
}

// `node --check` on `source` written as DIR/NAME.mjs (an ES module, as both harnesses load it).
void check_parses(const temp_dir& dir, const std::string& name, const std::string& source) {
  const fs::path file = dir / (name + ".mjs");
  write_text(file, source);
  const node_result r = node({"--check", file.string()}, dir / (name + ".log"));
  CHECK_MESSAGE(r.status == 0, name << ": " << r.output);
}

cli_result setup(const std::vector<std::string>& args, const std::vector<std::string>& env) {
  return cli_process(args, {}, env).finish(std::chrono::seconds(20));
}

}  // namespace

TEST_CASE("plugin js: the cline and opencode plugins setup writes have no slot left and parse as ES modules under node") {
  temp_dir dir{"handoff-plugin-js"};
  const fs::path home = dir / "home";
  REQUIRE(setup({"setup", "cline"}, {"HOME=" + home.string(), "CLINE_DIR"}).status == 0);
  REQUIRE(setup({"setup", "opencode", "--artifact-dir", (dir / "store").string()},
                {"HOME=" + home.string(), "XDG_CONFIG_HOME=" + (dir / "xdg").string()})
              .status == 0);
  const std::string cline = read_text(home / ".cline" / "plugins" / "handoff.js");
  const std::string opencode = read_text(dir / "xdg" / "opencode" / "handoff" / "opencode-plugin.js");

  for (const auto& [name, source] : {std::pair{std::string("cline"), cline}, std::pair{std::string("opencode"), opencode}}) {
    INFO(name);
    CHECK(source.starts_with("// handoff's " + name + " plugin"));
    CHECK(unfilled_slots(source).empty());
    CHECK(has(source, "function runHook(input, ms) {"));
    CHECK(has(source, "spawn(HANDOFF, [\"hook\", \"" + name + "\"]"));
    CHECK(has(source, "const HANDOFF = " + json(fs::canonical(HANDOFF_CLI_PATH).string()).dump() + ";"));
    check_parses(dir, name, source);
  }
  // cline's calls give its kill time: runHook has no default.
  CHECK(has(cline, "const KILL_MS = 2500;"));
  CHECK(has(cline, "callId: call }, KILL_MS);"));
  CHECK(has(cline, "}, KILL_MS);\n        if (answer.out)"));
  CHECK(has(opencode, "}, siblings.length > 0 ? SIBLINGS_MS : LONE_MS);"));
}

TEST_CASE("plugin js: fill_slots fills every slot once over the template, and throws on a slot without a value or a value without its slot") {
  CHECK(fill_slots("const A = @A@; const B = @B_2@; f(@A@);", {{"A", "1"}, {"B_2", "\"@A@\""}}) ==
        "const A = 1; const B = \"@A@\"; f(1);");  // a value is never scanned for slots
  CHECK(fill_slots("a@b.c @ 1 @@X@ @lower@", {{"X", "x"}}) == "a@b.c @ 1 @x @lower@");  // only @NAME@ is a slot

  CHECK_THROWS_AS(fill_slots("const HANDOFF = @HANDOFF@;", {}), std::logic_error);
  CHECK_THROWS_AS(fill_slots("const HANDOFF = @HANDOFF@; @KILL_MS@", {{"HANDOFF", "\"/x\""}}), std::logic_error);
  CHECK_THROWS_WITH(fill_slots("const HANDOFF = @HANDOF@;", {{"HANDOFF", "\"/x\""}}),
                    doctest::Contains("@HANDOF@ has no value"));
  CHECK_THROWS_WITH(fill_slots("const HANDOFF = @HANDOFF@;", {{"HANDOFF", "\"/x\""}, {"KILL_MS", "2500"}}),
                    doctest::Contains("no @KILL_MS@ slot"));
  CHECK_THROWS_AS(fill_slots("@A@", {{"A", "1"}, {"A", "2"}}), std::logic_error);
  CHECK_THROWS_AS(fill_slots("@A@", {{"A", "1"}, {"a", "2"}}), std::logic_error);
  CHECK_NOTHROW(fill_slots("no slots here", {}));
}

TEST_CASE("plugin js: runHook under node - {out} on exit 0, {error} with stderr's first line (400 characters at most), the hook killed at ms, never a rejection") {
  temp_dir dir{"handoff-plugin-js-run"};
  const fs::path stub = dir / "handoff";
  const fs::path pid_file = dir / "hang.pid";
  write_text(stub,
             "#!/bin/sh\n"
             "[ \"$1\" = hook ] && [ \"$2\" = stub ] || { echo \"args: $*\" >&2; exit 9; }\n"
             "case \"$MODE\" in\n"
             "  echo) cat ;;\n"
             "  fail) cat >/dev/null; printf '  the first line\\nthe second\\n' >&2; exit 3 ;;\n"
             "  long) cat >/dev/null; head -c 5000 /dev/zero | tr '\\0' x >&2; exit 4 ;;\n"
             "  quiet) cat >/dev/null; exit 5 ;;\n"
             "  hang) echo $$ > \"$PID_FILE\"; exec sleep 30 ;;\n"
             "esac\n");
  ::chmod(stub.c_str(), 0700);

  const std::string module = "import { spawn } from \"node:child_process\";\n"
                             "import { readFileSync } from \"node:fs\";\n"
                             "let HANDOFF = " + js_string(stub.string()) + ";\n" + run_hook_js("stub") +
                             "const gone = (pid) => { try { process.kill(pid, 0); return false; } catch (e) { return e.code === \"ESRCH\"; } };\n"
                             "const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));\n"
                             "const r = {};\n"
                             "process.env.PID_FILE = " + js_string(pid_file.string()) + ";\n"
                             "process.env.MODE = \"echo\"; r.echo = await runHook({ text: \"caf\\u00e9\", n: [1, 2] }, 10000);\n"
                             "process.env.MODE = \"fail\"; r.fail = await runHook({}, 10000);\n"
                             "process.env.MODE = \"long\"; r.long = await runHook({}, 10000);\n"
                             "process.env.MODE = \"quiet\"; r.quiet = await runHook({}, 10000);\n"
                             "process.env.MODE = \"hang\";\n"
                             "let t = Date.now(); r.hang = await runHook({}, 400); r.hangMs = Date.now() - t;\n"
                             "await sleep(500); r.hangGone = gone(Number(readFileSync(process.env.PID_FILE, \"utf8\")));\n"
                             "t = Date.now(); r.unwritable = await runHook({ n: 1n }, 5000); r.unwritableMs = Date.now() - t;\n"
                             "HANDOFF = " + js_string((dir / "absent").string()) + "; r.absent = await runHook({}, 5000);\n"
                             "console.log(JSON.stringify(r));\n";
  write_text(dir / "run.mjs", module);
  const node_result run = node({(dir / "run.mjs").string()}, dir / "run.log");
  REQUIRE_MESSAGE(run.status == 0, run.output);
  const json r = json::parse(run.output);
  INFO(r.dump(2));

  CHECK(r["echo"] == json{{"out", "{\"text\":\"caf\u00e9\",\"n\":[1,2]}"}});
  CHECK(r["fail"] == json{{"error", "handoff hook stub exited 3: the first line"}});
  CHECK(r["long"] == json{{"error", "handoff hook stub exited 4: " + std::string(400, 'x')}});
  CHECK(r["quiet"] == json{{"error", "handoff hook stub exited 5: "}});
  CHECK(r["hang"] == json{{"error", "handoff hook stub gave no answer in 400 ms"}});
  CHECK(r["hangMs"].get<int>() < 5000);
  CHECK(r["hangGone"] == true);
  CHECK(r["unwritable"]["error"].get<std::string>().find("BigInt") != std::string::npos);
  CHECK(r["unwritableMs"].get<int>() < 4000);  // resolved at once, not at its kill time
  CHECK(has(r["absent"]["error"].get<std::string>(), "ENOENT"));
}
