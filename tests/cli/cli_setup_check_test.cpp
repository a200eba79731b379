// `handoff setup NAME --check` for every harness of the table, and `handoff doctor`'s line for each
// harness on the PATH, on real files in a temporary HOME (each harness's own directory variable
// pointed there too): a check writes nothing, exits 1 until setup has run and 0 after, refuses a
// file setup would refuse, and does not go with --remove or --dry-run.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli_process.hpp"
#include "support/temp_dir.hpp"
#include "support/text_files.hpp"

namespace fs = std::filesystem;
using handoff::test::cli_result;
using handoff::test::read_text;
using handoff::test::run_cli;
using handoff::test::temp_dir;
using handoff::test::write_text;

namespace {

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// A HOME, and each harness's directory variable under it; none of them exists until a setup
// makes it, so that "nothing was created" is "root is empty".
struct machine {
  temp_dir dir{"handoff-setup-check"};
  fs::path root = dir / "root";
  fs::path home = root / "home";
  fs::path package;  // a built @handoff/pi package, outside root

  machine() {
    fs::create_directories(root);
    package = dir / "pi-package";
    fs::create_directories(package / "dist" / "src");
    fs::copy_file(fs::path(HANDOFF_SOURCE_DIR) / "client" / "pi" / "package.json", package / "package.json");
    std::ofstream(package / "dist" / "src" / "extension.js") << "export default function () {}\n";
  }

  std::vector<std::string> env(std::vector<std::string> extra = {}) const {
    for (const std::string& e :
         {"HOME=" + home.string(), "XDG_CONFIG_HOME=" + (root / "config").string(),
          "XDG_CACHE_HOME=" + (root / "cache").string(), "CODEX_HOME=" + (root / "codex").string(),
          "COPILOT_HOME=" + (root / "copilot").string(), "CLINE_DIR=" + (root / "cline").string(),
          "PI_CODING_AGENT_DIR=" + (root / "pi").string()})
      extra.push_back(e);
    return extra;
  }

  // `handoff setup NAME args...` (pi's given the package, except to remove it).
  cli_result setup(const std::string& name, std::vector<std::string> args = {}) const {
    if (name == "pi" && !has_arg(args, "--remove")) args.insert(args.end(), {"--package", package.string()});
    args.insert(args.begin(), {"setup", name});
    return run_cli(args, {}, env());
  }

  static bool has_arg(const std::vector<std::string>& args, const std::string& arg) {
    for (const std::string& a : args)
      if (a == arg) return true;
    return false;
  }
};

struct harness_case {
  std::string name;
  std::string settings;   // under root: the file a malformed text goes in
  std::string malformed;  // a text setup refuses there
  std::string why;        // what the refusal says
};

const std::vector<harness_case>& cases() {
  static const std::vector<harness_case> all = {
      {"claude-code", "home/.claude/settings.json", "{not json", "is not valid JSON"},
      {"codex", "codex/config.toml", "[mcp_servers\n", "config.toml"},
      {"copilot", "copilot/settings.json", "{not json", "is not valid JSON"},
      {"gemini", "home/.gemini/settings.json", "{not json", "is not valid JSON"},
      {"opencode", "config/opencode/opencode.json", "{not json", "is not valid JSON"},
      {"kilo", "config/kilo/kilo.json", "{not json", "is not valid JSON"},
      {"cline", "cline/plugins/handoff.js", "export default {}\n", "is not handoff's plugin"},
      {"pi", "pi/settings.json", "{not json", "is not valid JSON"},
  };
  return all;
}

}  // namespace

TEST_CASE("setup --check: every harness exits 1 on a fresh HOME and creates nothing, 0 after setup, 1 after --remove") {
  for (const harness_case& h : cases()) {
    CAPTURE(h.name);
    machine m;
    const cli_result fresh = m.setup(h.name, {"--check"});
    CHECK_MESSAGE(fresh.status == 1, fresh.err);
    CHECK(has(fresh.out, "setup " + h.name + ": "));
    CHECK(has(fresh.out, " lacks handoff's entries (run handoff setup " + h.name + ")"));
    CHECK_FALSE(has(fresh.out, "has handoff's entries"));
    CHECK(fresh.err.empty());
    CHECK(fs::is_empty(m.root));  // no file, no directory

    const cli_result set = m.setup(h.name);
    REQUIRE_MESSAGE(set.status == 0, set.err);
    const cli_result after = m.setup(h.name, {"--check"});
    CHECK_MESSAGE(after.status == 0, std::string(after.out + after.err));
    CHECK(has(after.out, "setup " + h.name + ": " + (m.root / h.settings).string() + " has handoff's entries"));
    CHECK_FALSE(has(after.out, "lacks"));

    REQUIRE(m.setup(h.name, {"--remove"}).status == 0);
    const cli_result removed = m.setup(h.name, {"--check"});
    CHECK(removed.status == 1);
    CHECK(has(removed.out, " lacks handoff's entries"));
  }
}

TEST_CASE("setup --check: a file setup would refuse gives its failure status and message, and stays as it was") {
  for (const harness_case& h : cases()) {
    CAPTURE(h.name);
    machine m;
    const fs::path settings = m.root / h.settings;
    fs::create_directories(settings.parent_path());
    write_text(settings, h.malformed);
    const cli_result r = m.setup(h.name, {"--check"});
    CHECK(r.status == 1);
    CHECK_MESSAGE(has(r.err, "handoff setup " + h.name + ": "), r.err);
    CHECK_MESSAGE(has(r.err, h.why), r.err);
    CHECK(read_text(settings) == h.malformed);

    fs::remove(settings);
    fs::create_symlink(m.dir / "elsewhere", settings);
    const cli_result link = m.setup(h.name, {"--check"});
    CHECK(link.status == 1);
    CHECK_MESSAGE(has(link.err, "is a symlink"), link.err);
    CHECK_FALSE(fs::exists(m.dir / "elsewhere"));
  }
}

TEST_CASE("setup --check goes with neither --remove nor --dry-run") {
  for (const harness_case& h : cases()) {
    CAPTURE(h.name);
    machine m;
    for (const char* other : {"--remove", "--dry-run"}) {
      const cli_result r = m.setup(h.name, {"--check", other});
      CHECK(r.status == 2);
      CHECK_MESSAGE(has(r.err, "excludes"), r.err);
      CHECK(r.out.empty());
    }
    CHECK(fs::is_empty(m.root));
  }
}

TEST_CASE("doctor: a line for each harness on the PATH, a warning until it is set up, ok after, none for the others") {
  machine m;
  const fs::path bin = m.dir / "bin";
  fs::create_directories(bin);
  for (const char* program : {"claude", "gemini"}) {
    write_text(bin / program, "#!/bin/sh\n");
    fs::permissions(bin / program, fs::perms::owner_all);
  }
  const auto doctor = [&] {
    return run_cli({"doctor", "--socket", (m.dir / "no-daemon.sock").string()}, {}, m.env({"PATH=" + bin.string()}));
  };
  const auto no_line_for_others = [](const std::string& out) {
    for (const std::string other : {"codex", "copilot", "opencode", "kilo", "cline", "pi"}) {
      CAPTURE(other);
      CHECK_FALSE(has(out, "ok   " + other + ":"));
      CHECK_FALSE(has(out, "warn " + other + " "));
    }
  };

  const cli_result before = doctor();
  CHECK_MESSAGE(has(before.out, "warn claude-code is on the PATH but handoff is not set up for it: run handoff setup "
                                "claude-code\n"),
                before.out);
  CHECK(has(before.out, "warn gemini is on the PATH but handoff is not set up for it: run handoff setup gemini\n"));
  CHECK_FALSE(has(before.out, "FAIL claude-code"));
  CHECK_FALSE(has(before.out, "setup claude-code:"));  // setup's own lines are not printed
  no_line_for_others(before.out);
  CHECK(fs::is_empty(m.root));

  REQUIRE(m.setup("claude-code").status == 0);
  const cli_result after = doctor();
  const fs::path claude_settings = m.home / ".claude" / "settings.json";
  CHECK_MESSAGE(has(after.out, "ok   claude-code: handoff is set up (" + claude_settings.string() + ")\n"), after.out);
  CHECK(has(after.out, "warn gemini is on the PATH but handoff is not set up for it"));
  no_line_for_others(after.out);

  // A settings file setup would refuse: a warning that says why.
  write_text(m.home / ".gemini" / "settings.json", "{not json");
  const cli_result malformed = doctor();
  CHECK_MESSAGE(has(malformed.out, "warn gemini is on the PATH but handoff's setup for it cannot be checked: " +
                                       (m.home / ".gemini" / "settings.json").string() + " is not valid JSON"),
                malformed.out);
  CHECK(malformed.err.empty());
}

TEST_CASE("setup kilo --check names a config of Kilo's that still holds handoff's entries, and writes none of them") {
  machine m;
  const fs::path dir = m.root / "config" / "kilo";
  fs::create_directories(dir);
  write_text(dir / "opencode.json", "{}");
  REQUIRE(m.setup("kilo").status == 0);  // handoff's entries in opencode.json, the only config there
  write_text(dir / "kilo.json", "{}\n");  // which Kilo reads first from now on
  const std::string stray = read_text(dir / "opencode.json");

  const cli_result r = m.setup("kilo", {"--check"});
  CHECK(r.status == 1);
  CHECK_MESSAGE(has(r.out, "setup kilo: " + (dir / "opencode.json").string() +
                               " holds handoff's entries, which belong elsewhere (run handoff setup kilo)\n"),
                r.out);
  CHECK(has(r.out, "setup kilo: " + (dir / "handoff" / "opencode-plugin.js").string() + " has handoff's entries\n"));
  CHECK(has(r.out, "setup kilo: " + (dir / "kilo.json").string() + " lacks handoff's entries"));
  CHECK(read_text(dir / "opencode.json") == stray);
  CHECK(read_text(dir / "kilo.json") == "{}\n");

  REQUIRE(m.setup("kilo").status == 0);
  CHECK(m.setup("kilo", {"--check"}).status == 0);
}
