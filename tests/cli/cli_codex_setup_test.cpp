// `handoff setup codex` (client/cli/harness/codex/settings.hpp) on real config.toml files in a
// temporary Codex home: every byte outside handoff's table kept, the table replaced where it
// stood, taken out exactly, and what it cannot edit refused with the file and line. That Codex
// itself reads what it wrote: tests/codex/setup.test.mjs.
#include <doctest/doctest.h>

#include <algorithm>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli_process.hpp"
#include "support/temp_dir.hpp"

namespace fs = std::filesystem;
using handoff::test::run_cli;
using handoff::test::temp_dir;

namespace {

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// A Codex home (not yet made) in a temporary directory, and `handoff setup codex` run on it.
struct codex_home {
  temp_dir dir{"handoff-setup-codex"};
  fs::path home = dir / "codex-home";
  fs::path config = home / "config.toml";

  // The cases of handoff's server table run with --keep-native-agents, so that the file holds
  // that table alone; the lines turning Codex's own subagent tools off have cases of their own
  // (keep_native = false: setup as a user runs it).
  bool keep_native = true;

  // With CODEX_HOME naming the home (HOME elsewhere), as Codex's users set it.
  handoff::test::cli_result setup(std::vector<std::string> args = {}) const {
    if (keep_native && std::find(args.begin(), args.end(), "--remove") == args.end()) args.push_back("--keep-native-agents");
    args.insert(args.begin(), {"setup", "codex"});
    return run_cli(args, {}, {"CODEX_HOME=" + home.string(), "HOME=" + (dir / "home").string()});
  }
  void write(const std::string& text) const {
    fs::create_directories(home);
    std::ofstream(config, std::ios::binary) << text;
  }
  std::string text() const {
    std::ifstream in(config, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
  }
  // handoff's table as setup writes it for this home, lines ending in `newline`.
  std::string table(const std::string& env_keys = "", const std::string& newline = "\n") const {
    const std::vector<std::string> lines = {
        "[mcp_servers.handoff]",
        "command = \"" + fs::canonical(HANDOFF_CLI_PATH).string() + "\"",
        "args = [\"mcp\"]",
        "env = { CODEX_HOME = \"" + home.string() + "\" }",
        "env_vars = [\"XDG_RUNTIME_DIR\", \"XDG_STATE_HOME\", \"XDG_CACHE_HOME\", \"HANDOFF_SOCKET\", \"HANDOFF_AUTOSTART\", "
        "\"HANDOFF_CODEX\", \"HANDOFF_CODEX_MAX_RUNNING\", \"HANDOFF_CODEX_TURN_TIMEOUT_S\", \"HANDOFF_CODEX_OUTPUT_BYTES\", "
        "\"OPENAI_API_KEY\"" + env_keys + "]",
        "startup_timeout_sec = 20",
        "tool_timeout_sec = 86400",
        "default_tools_approval_mode = \"approve\""};
    std::string out;
    for (const std::string& line : lines) out += line + newline;
    return out;
  }
};

mode_t mode_of(const fs::path& path) {
  struct stat st {};
  REQUIRE(::lstat(path.c_str(), &st) == 0);
  return st.st_mode & 0777;
}

// A refusal: status 1, the message naming the file (and `where`, e.g. its line), nothing changed.
void check_refused(const codex_home& c, const std::string& text, const std::string& where, const std::string& why) {
  c.write(text);
  for (const std::vector<std::string>& args : {std::vector<std::string>{}, {"--dry-run"}}) {
    const auto r = c.setup(args);
    CHECK(r.status == 1);
    CHECK_MESSAGE(has(r.err, "setup codex: " + c.config.string() + where), r.err);
    CHECK_MESSAGE(has(r.err, why), r.err);
    CHECK(r.out.empty());
    CHECK(c.text() == text);
  }
}

}  // namespace

TEST_CASE("setup codex: a missing home gets config.toml with handoff's server alone, 0600 in a 0700 directory") {
  codex_home c;
  const auto r = c.setup();
  CHECK_MESSAGE(r.status == 0, r.err);
  CHECK(r.out.starts_with("setup codex: wrote handoff's entries to " + c.config.string() + "\n"));
  CHECK(c.text() == c.table());
  CHECK(mode_of(c.home) == 0700);
  CHECK(mode_of(c.config) == 0600);

  const auto again = c.setup();
  CHECK(again.out.starts_with("setup codex: " + c.config.string() + " already has handoff's entries; nothing to change\n"));
  CHECK(c.text() == c.table());

  CHECK(c.setup({"--remove"}).status == 0);
  CHECK(c.text().empty());
  CHECK(has(c.setup({"--remove"}).out, "has no entry of handoff's; nothing to change"));
}

// The lines that turn Codex's own subagent tools off, as setup appends them to a file without them.
std::string native_off(const std::string& nl = "\n") {
  return nl + "[features]  # added by handoff setup codex" + nl + "multi_agent = false  # added by handoff setup codex" + nl +
         nl + "[features.multi_agent_v2]  # added by handoff setup codex" + nl +
         "disable_native_tools = true  # added by handoff setup codex" + nl;
}

TEST_CASE("setup codex: Codex's own subagent tools turned off by default and said plainly, --keep-native-agents and --remove take exactly those lines out") {
  for (const std::string& before : {std::string(""), std::string("model = \"gpt-6.1-sol\"\n"), std::string("a = 1")}) {
    CAPTURE(before);
    codex_home c;
    c.keep_native = false;
    if (!before.empty()) c.write(before);
    const auto r = c.setup();
    CHECK_MESSAGE(r.status == 0, r.err);
    CHECK(has(r.out, "setup codex: Codex's own subagent tools are off ([features] multi_agent = false, "
                     "[features.multi_agent_v2] disable_native_tools = true), so a model delegates through handoff's; "
                     "--keep-native-agents keeps them\n"));
    const std::string base = before.empty() ? "" : (before.ends_with("\n") ? before : before + "\n") + "\n";
    CHECK(c.text() == base + c.table() + native_off());
    CHECK(has(c.setup().out, "already has handoff's entries; nothing to change"));  // twice is once

    c.keep_native = true;  // the user changes their mind: only handoff's marked lines go
    const auto keep = c.setup();
    CHECK(has(keep.out, "Codex's own subagent tools stay on (--keep-native-agents)"));
    CHECK(c.text() == base + c.table());
    c.keep_native = false;
    REQUIRE(c.setup().status == 0);
    REQUIRE(c.setup({"--remove"}).status == 0);
    CHECK(c.text() == (before == "a = 1" ? "a = 1\n" : before));
  }
}

TEST_CASE("setup codex: in the user's own [features], one marked line under its header, and a key the user set is kept and named") {
  codex_home c;
  c.keep_native = false;
  const std::string before = "model = \"x\"\r\n\r\n[features]\r\nweb_search = true # mine\r\n\r\n"
                             "[features.multi_agent_v2]\r\ndisable_native_tools = false\r\n\r\n[tui]\r\nfoo = 1\r\n";
  c.write(before);
  const auto r = c.setup();
  CHECK_MESSAGE(r.status == 0, r.err);
  CHECK(has(r.out, "setup codex: kept your [features.multi_agent_v2] disable_native_tools = false (handoff's: true) as you set "
                   "it: the Codex subagent tools it governs stay on\n"));
  CHECK_FALSE(has(r.out, "subagent tools are off"));
  CHECK(c.text() == "model = \"x\"\r\n\r\n[features]\r\nmulti_agent = false  # added by handoff setup codex\r\n"
                    "web_search = true # mine\r\n\r\n[features.multi_agent_v2]\r\ndisable_native_tools = false\r\n\r\n"
                    "[tui]\r\nfoo = 1\r\n\r\n" + c.table("", "\r\n"));
  REQUIRE(c.setup({"--remove"}).status == 0);
  CHECK(c.text() == before);
}

TEST_CASE("setup codex: [features] handoff cannot extend (inline, a dotted key, not a table) is refused with the way out, the file left as it was") {
  for (const auto& [text, why] : std::vector<std::pair<std::string, std::string>>{
           {"features = { web_search = true }\n", ":1: features is an inline table; handoff cannot set features.multi_agent in it: "
                                                 "write it as a [features] table, or keep Codex's own subagent tools with "
                                                 "--keep-native-agents (nothing was changed)"},
           {"features.web_search = true\n", ":1: features is defined by a dotted key (features.web_search = ...)"},
           {"[features]\nmulti_agent_v2.x = 1\n", ":2: features.multi_agent_v2 is defined by a dotted key"},
           {"features = 3\n", ":1: features is not a table"}}) {
    CAPTURE(text);
    codex_home c;
    c.keep_native = false;
    c.write(text);
    const auto r = c.setup();
    CHECK(r.status == 1);
    CHECK_MESSAGE(has(r.err, "setup codex: " + c.config.string() + why), r.err);
    CHECK(c.text() == text);
    c.keep_native = true;  // the way out the message names
    CHECK(c.setup().status == 0);
  }
}

TEST_CASE("setup codex: --codex-home wins over CODEX_HOME, and HOME/.codex is the default") {
  codex_home c;
  const fs::path other = c.dir / "other";
  auto r = c.setup({"--codex-home", other.string() + "/"});
  CHECK_MESSAGE(r.status == 0, r.err);
  CHECK_FALSE(fs::exists(c.config));
  const auto read = [](const fs::path& path) {
    std::ifstream in(path);
    return std::string{std::istreambuf_iterator<char>(in), {}};
  };
  CHECK(has(read(other / "config.toml"), "env = { CODEX_HOME = \"" + other.string() + "\" }\n"));

  r = run_cli({"setup", "codex"}, {}, {"CODEX_HOME", "HOME=" + (c.dir / "home").string()});
  CHECK_MESSAGE(r.status == 0, r.err);
  CHECK(has(read(c.dir / "home" / ".codex" / "config.toml"),
            "env = { CODEX_HOME = \"" + (c.dir / "home" / ".codex").string() + "\" }\n"));

  r = run_cli({"setup", "codex"}, {}, {"CODEX_HOME", "HOME"});
  CHECK(r.status == 2);
  CHECK(has(r.err, "setup codex: neither CODEX_HOME nor HOME is set; pass --codex-home DIR"));
}

TEST_CASE("setup codex: an existing file's comments, tables and CRLF line ends are kept byte for byte") {
  codex_home c;
  const std::string before =
      "# Codex settings\r\n"
      "model = \"gpt-5\"  # the default\r\n"
      "\r\n"
      "[mcp_servers.docs]\r\n"
      "command = \"docs-server\"\r\n"
      "\r\n"
      "[profiles.fast]\r\n"
      "notes = \"\"\"\r\n"
      "[mcp_servers.handoff]\r\n"
      "command = 'not a header: inside a string'\r\n"
      "\"\"\"\r\n"
      "arr = [\r\n"
      "  [1, 2],  # [mcp_servers.handoff]\r\n"
      "]\r\n"
      "# the end\r\n";
  c.write(before);
  ::chmod(c.config.c_str(), 0640);
  const auto r = c.setup();
  CHECK_MESSAGE(r.status == 0, r.err);
  CHECK(c.text() == before + "\r\n" + c.table("", "\r\n"));
  CHECK(mode_of(c.config) == 0640);  // its mode kept

  CHECK(has(c.setup().out, "already has handoff's entries; nothing to change"));
  CHECK(c.text() == before + "\r\n" + c.table("", "\r\n"));

  CHECK(has(c.setup({"--remove"}).out, "setup codex: removed handoff's entries from " + c.config.string()));
  CHECK(c.text() == before);
  CHECK(mode_of(c.config) == 0640);
}

TEST_CASE("setup codex: TOML 1.1 as Codex reads it (newlines in inline tables, new escapes, times without seconds) is read too") {
  codex_home c;
  const std::string before =
      "[mcp_servers.docs]\n"
      "command = \"docs\"\n"
      "env = {\n"
      "  A = \"1\",  # a comment\n"
      "  \"[mcp_servers.handoff]\" = \"\\e[1m\\x41\",\n"
      "}\n"
      "[tui]\n"
      "at = 07:32\n";
  c.write(before);
  const auto r = c.setup();
  CHECK_MESSAGE(r.status == 0, r.err);
  CHECK(c.text() == before + "\n" + c.table());
  REQUIRE(c.setup({"--remove"}).status == 0);
  CHECK(c.text() == before);
}

TEST_CASE("setup codex: an older handoff table is replaced where it stood, its sub-tables taken out, the rest kept") {
  codex_home c;
  const std::string head =
      "model = \"gpt-5\"\n"
      "\n"
      "# handoff, from an older install\n";
  const std::string older =
      "[mcp_servers.handoff]\n"
      "command = \"/old/bin/handoff\"\n"
      "args = [\"mcp\"]\n";
  const std::string middle =
      "\n"
      "# the docs server\n"
      "[mcp_servers.docs]\n"
      "command = \"docs\"\n";
  const std::string older_env =
      "[mcp_servers.handoff.env]\n"
      "CODEX_HOME = \"/old/home\"\n";
  const std::string tail =
      "\n"
      "[tui]\n"
      "theme = \"dark\"";  // and no final newline
  c.write(head + older + middle + "\n" + older_env + tail);
  const auto r = c.setup();
  CHECK_MESSAGE(r.status == 0, r.err);
  CHECK(c.text() == head + c.table() + middle + tail);

  CHECK(c.setup({"--remove"}).status == 0);
  CHECK(c.text() == head + middle + tail);
}

TEST_CASE("setup codex: handoff's table as Codex rewrites it (env a sub-table, float timeouts) is no change to make") {
  codex_home c;
  // What `codex mcp add` leaves of handoff's table when it writes out every server.
  std::string codex_form = c.table();
  const std::string env_line = "env = { CODEX_HOME = \"" + c.home.string() + "\" }\n";
  codex_form.erase(codex_form.find(env_line), env_line.size());
  codex_form.replace(codex_form.find("= 20\n"), 5, "= 20.0\n");
  codex_form.replace(codex_form.find("= 86400\n"), 8, "= 86400.0\n");
  codex_form += "\n[mcp_servers.handoff.env]\nCODEX_HOME = \"" + c.home.string() + "\"\n\n[mcp_servers.docs]\ncommand = \"docs\"\n";
  c.write("a = 1\n\n" + codex_form);
  const auto r = c.setup();
  CHECK_MESSAGE(r.status == 0, r.err);
  CHECK(has(r.out, "already has handoff's entries; nothing to change"));
  CHECK(c.text() == "a = 1\n\n" + codex_form);

  // A value that differs: handoff's own form, where the table stood.
  std::string older = codex_form;
  older.replace(older.find("= 20.0\n"), 7, "= 30.0\n");
  c.write("a = 1\n\n" + older);
  REQUIRE(c.setup().status == 0);
  CHECK(c.text() == "a = 1\n\n" + c.table() + "\n[mcp_servers.docs]\ncommand = \"docs\"\n");
  REQUIRE(c.setup({"--remove"}).status == 0);
  CHECK(c.text() == "a = 1\n\n[mcp_servers.docs]\ncommand = \"docs\"\n");
}

TEST_CASE("setup codex: appended with one blank line, and --remove gives back exactly the file before") {
  for (const std::string& before : {std::string("a = 1\n"), std::string("a = 1\n\n\n"), std::string("# only a comment\n"),
                                    std::string("[x]\ny = 'z'\n# trailing comment\n"), std::string("")}) {
    CAPTURE(before);
    codex_home c;
    c.write(before);
    REQUIRE(c.setup().status == 0);
    CHECK(c.text() == before + (before.empty() ? "" : "\n") + c.table());
    REQUIRE(c.setup({"--remove"}).status == 0);
    CHECK(c.text() == before);
  }
  codex_home c;  // a file without a final newline gains it
  c.write("a = 1");
  REQUIRE(c.setup().status == 0);
  CHECK(c.text() == "a = 1\n\n" + c.table());
  REQUIRE(c.setup({"--remove"}).status == 0);
  CHECK(c.text() == "a = 1\n");
}

TEST_CASE("setup codex: --dry-run prints the file as it would be and changes nothing") {
  codex_home c;
  auto r = c.setup({"--dry-run"});
  CHECK(r.status == 0);
  CHECK(r.out == "setup codex: would write " + c.config.string() + ":\n" + c.table());
  CHECK_FALSE(fs::exists(c.home));

  c.write("a = 1\n");
  r = c.setup({"--dry-run"});
  CHECK(r.out == "setup codex: would write " + c.config.string() + ":\na = 1\n\n" + c.table());
  CHECK(c.text() == "a = 1\n");
  REQUIRE(c.setup().status == 0);
  r = c.setup({"--remove", "--dry-run"});
  CHECK(r.out == "setup codex: would write " + c.config.string() + ":\na = 1\n");
  CHECK(c.text() == "a = 1\n\n" + c.table());
}

TEST_CASE("setup codex: each model provider's env_key is passed through, once, in file order") {
  codex_home c;
  const std::string before =
      "[model_providers.zeta]\n"
      "name = \"Zeta\"\n"
      "env_key = \"ZETA_API_KEY\"\n"
      "[model_providers.azure]\n"
      "name = \"Azure\"\n"
      "env_key = \"AZURE_OPENAI_API_KEY\"\n"
      "[model_providers.again]\n"
      "env_key = \"ZETA_API_KEY\"\n"
      "[model_providers.openai2]\n"
      "env_key = \"OPENAI_API_KEY\"\n"
      "[model_providers.local]\n"
      "name = \"no key\"\n";
  c.write(before);
  REQUIRE(c.setup().status == 0);
  CHECK(c.text() == before + "\n" + c.table(", \"ZETA_API_KEY\", \"AZURE_OPENAI_API_KEY\""));

  // A provider added later: setup again updates the table in place.
  const std::string more = "[model_providers.more]\nenv_key = \"MORE_KEY\"\n";
  c.write(c.text() + "\n" + more);
  REQUIRE(c.setup().status == 0);
  CHECK(c.text() == before + "\n" + c.table(", \"ZETA_API_KEY\", \"AZURE_OPENAI_API_KEY\", \"MORE_KEY\"") + "\n" + more);
}

TEST_CASE("setup codex: a file that is not valid TOML is refused with its line, and left as it was") {
  codex_home c;
  check_refused(c, "a = 1\n[mcp_servers.docs\ncommand = \"x\"\n", ":2: not valid TOML", "fix it first (nothing was changed)");
  check_refused(c, "a = 1\na = 2\n", ":2: not valid TOML", "nothing was changed");
  check_refused(c, "s = \"\"\"\nnever closed\n", ":2: not valid TOML", "end-of-file");
  check_refused(c, std::string("k = \"\xff\"\n"), ":1: not valid TOML", "nothing was changed");
  c.write("a = \n");
  CHECK(c.setup({"--remove"}).status == 1);  // --remove too
  CHECK(c.text() == "a = \n");
}

TEST_CASE("setup codex: handoff's server defined other than by its own table is refused, the file left as it was") {
  codex_home c;
  check_refused(c, "a = 1\nmcp_servers = { handoff = { command = \"x\" } }\n", ":2: mcp_servers.handoff is defined inside an inline table",
                "handoff edits only a [mcp_servers.handoff] table of its own");
  check_refused(c, "\n\nmcp_servers.handoff.command = \"x\"\n", ":3: mcp_servers.handoff is set by a dotted key (mcp_servers.handoff.command",
                "make it one or take it out");
  check_refused(c, "[mcp_servers]\nother = { command = \"y\" }\nhandoff.command = \"x\"\n",
                ":3: mcp_servers.handoff is set by a dotted key", "nothing was changed");
  check_refused(c, "[mcp_servers]\nhandoff = { command = \"x\" }\n", ":2: mcp_servers.handoff is set by a key", "nothing was changed");
  check_refused(c, "[[mcp_servers.handoff]]\ncommand = \"x\"\n", ":1: mcp_servers.handoff is an array of tables", "nothing was changed");
  check_refused(c, "mcp_servers = { docs = { command = \"x\" } }\n", ":1: mcp_servers is an inline table",
                "write it as a [mcp_servers] table");
  check_refused(c, "mcp_servers = 3\n", ":1: mcp_servers is not a table", "nothing was changed");
  // Taking out what handoff does not own is refused as well.
  c.write("mcp_servers.handoff.command = \"x\"\n");
  CHECK(c.setup({"--remove"}).status == 1);
  CHECK(c.text() == "mcp_servers.handoff.command = \"x\"\n");
}

TEST_CASE("setup codex: a symlink, a file that is not regular and a file over 16 MiB are refused untouched") {
  codex_home c;
  fs::create_directories(c.home);
  std::ofstream(c.dir / "elsewhere.toml") << "a = 1\n";
  fs::create_symlink(c.dir / "elsewhere.toml", c.config);
  auto r = c.setup();
  CHECK(r.status == 1);
  CHECK(has(r.err, "setup codex: " + c.config.string() + " is a symlink"));
  CHECK(fs::is_symlink(c.config));
  CHECK(c.text() == "a = 1\n");
  CHECK(c.setup({"--remove"}).status == 1);

  fs::remove(c.config);
  REQUIRE(::mkfifo(c.config.c_str(), 0600) == 0);
  r = c.setup();
  CHECK(r.status == 1);
  CHECK(has(r.err, c.config.string() + " is not a regular file"));
  fs::remove(c.config);

  const std::string big = "# " + std::string(16 << 20, 'x') + "\n";
  c.write(big);
  r = c.setup();
  CHECK(r.status == 1);
  CHECK(has(r.err, c.config.string() + " is larger than 16 MiB"));
  CHECK(fs::file_size(c.config) == big.size());
}

TEST_CASE("handoff mcp refuses to start on a setting out of its range, naming it, and reads nothing") {
  temp_dir dir{"handoff-mcp-env"};
  const std::vector<std::string> base = {"CODEX_HOME=" + (dir / "codex-home").string(), "HOME=" + dir.path().string(),
                                         "HANDOFF_AUTOSTART=0"};
  struct bad_setting {
    std::string variable, value, range;
  };
  for (const bad_setting& bad : {bad_setting{"HANDOFF_CODEX_MAX_RUNNING", "0", "from 1 to 32"},
                                 bad_setting{"HANDOFF_CODEX_MAX_RUNNING", "4x", "from 1 to 32"},
                                 bad_setting{"HANDOFF_CODEX_TURN_TIMEOUT_S", "-5", "from 1 to 604800"},
                                 bad_setting{"HANDOFF_CODEX_OUTPUT_BYTES", "100", "from 1024 to 67108864"}}) {
    CAPTURE(bad.variable);
    CAPTURE(bad.value);
    std::vector<std::string> env = base;
    env.push_back(bad.variable + "=" + bad.value);
    // An initialize request on stdin: a server that started would answer it.
    const auto r = run_cli({"mcp"}, R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{}})" "\n", env);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(has(r.err, "handoff mcp: " + bad.variable + " must be a whole number " + bad.range + " (it is '" + bad.value + "')"));
  }
  // In range, and empty (as unset), it starts and answers.
  std::vector<std::string> env = base;
  env.push_back("HANDOFF_CODEX_MAX_RUNNING=32");
  env.push_back("HANDOFF_CODEX_OUTPUT_BYTES=");
  const auto r = run_cli({"mcp"}, R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{}})" "\n", env);
  CHECK(r.status == 0);
  CHECK(has(r.out, R"("id":1)"));
  CHECK(has(r.out, "serverInfo"));
}
