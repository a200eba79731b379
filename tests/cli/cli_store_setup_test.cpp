// The store rules `handoff setup claude-code` and `handoff setup opencode` write, as a user runs
// them (no --artifact-dir, a temporary HOME): the store in handoff's own cache directory, the
// former default's rule kept while that directory exists (older footers name files there) and
// dropped once it is gone, an older install's rule replaced, the user's own rules kept, and no
// directory made. client/cli/harness/store_dirs.hpp.
#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_process.hpp"
#include "support/temp_dir.hpp"
#include "support/text_files.hpp"

namespace fs = std::filesystem;
using handoff::test::cli_process;
using handoff::test::cli_result;
using handoff::test::temp_dir;
using handoff::test::read_text;
using handoff::test::write_text;
using nlohmann::json;

namespace {

// A user with a HOME of its own and nothing else set that moves a store.
struct store_user {
  temp_dir dir{"handoff-store-setup"};
  fs::path home = dir / "home";
  fs::path store = home / ".cache" / "handoff" / "results";
  fs::path former = home / ".pi" / "agent" / "cache" / "openpi" / "subagent-results";
  fs::path claude_settings = home / ".claude" / "settings.json";
  fs::path opencode_config = home / ".config" / "opencode" / "opencode.json";

  store_user() { fs::create_directories(home); }

  cli_result setup(const std::string& harness, std::vector<std::string> args = {}) const {
    args.insert(args.begin(), {"setup", harness});
    return cli_process(args, {}, {"HOME=" + home.string(), "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "PI_CODING_AGENT_DIR"})
        .finish(std::chrono::seconds(20));
  }
  void make_former() const {
    fs::create_directories(former);
    fs::permissions(former, fs::perms::owner_all, fs::perm_options::replace);
  }
};

std::string read_rule_of(const fs::path& dir) { return "Read(/" + dir.string() + "/**)"; }

json claude_allow(const store_user& u) { return json::parse(read_text(u.claude_settings))["permissions"]["allow"]; }

json opencode_rules(const store_user& u) {
  return json::parse(read_text(u.opencode_config))["permission"]["external_directory"];
}

}  // namespace

TEST_CASE("setup claude-code allows Read in handoff's cache store, replaces an older install's rule, makes no directory") {
  store_user u;
  // An older install's rule (the former default), beside the user's own.
  write_text(u.claude_settings, json{{"permissions", {{"allow", json::array({"Read(//srv/docs/**)", read_rule_of(u.former)})}}}}.dump());
  const cli_result r = u.setup("claude-code");
  REQUIRE_MESSAGE(r.status == 0, r.err);
  CHECK(claude_allow(u) == json::array({"Read(//srv/docs/**)", read_rule_of(u.store)}));
  CHECK_FALSE(fs::exists(u.home / ".pi"));
  CHECK_FALSE(fs::exists(u.home / ".cache"));
  const cli_result removed = u.setup("claude-code", {"--remove"});
  REQUIRE(removed.status == 0);
  CHECK(claude_allow(u) == json::array({"Read(//srv/docs/**)"}));
}

TEST_CASE("setup claude-code keeps Read in the former store while it exists, and drops it once it is gone") {
  store_user u;
  u.make_former();
  REQUIRE(u.setup("claude-code").status == 0);
  CHECK(claude_allow(u) == json::array({read_rule_of(u.store), read_rule_of(u.former)}));
  const std::string installed = read_text(u.claude_settings);
  const cli_result again = u.setup("claude-code");
  CHECK(again.status == 0);
  CHECK(read_text(u.claude_settings) == installed);

  // handoffd drained and removed it: the next setup takes its rule out.
  fs::remove(u.former);
  REQUIRE(u.setup("claude-code").status == 0);
  CHECK(claude_allow(u) == json::array({read_rule_of(u.store)}));

  // --remove takes out both, whichever exist.
  u.make_former();
  REQUIRE(u.setup("claude-code").status == 0);
  REQUIRE(claude_allow(u).size() == 2);
  fs::remove(u.former);
  REQUIRE(u.setup("claude-code", {"--remove"}).status == 0);
  CHECK_FALSE(json::parse(read_text(u.claude_settings)).contains("permissions"));
}

TEST_CASE("setup claude-code names no former store that is a symlink, and only the store named by --artifact-dir") {
  store_user u;
  fs::create_directories(u.former.parent_path());
  fs::create_directory(u.dir / "elsewhere");
  fs::create_directory_symlink(u.dir / "elsewhere", u.former);
  REQUIRE(u.setup("claude-code").status == 0);
  CHECK(claude_allow(u) == json::array({read_rule_of(u.store)}));

  fs::remove(u.former);
  u.make_former();
  const fs::path chosen = u.dir / "chosen";
  REQUIRE(u.setup("claude-code", {"--artifact-dir", chosen.string()}).status == 0);
  CHECK(claude_allow(u) == json::array({read_rule_of(chosen)}));  // the default's and the former's went
}

TEST_CASE("setup opencode allows the cache store and the former store while it exists, and keeps the user's rules") {
  store_user u;
  write_text(u.opencode_config,
           json{{"permission", {{"external_directory", {{"/srv/*", "allow"}, {u.former.string() + "/*", "allow"}}}}}}.dump());
  REQUIRE(u.setup("opencode").status == 0);
  CHECK(opencode_rules(u) == json{{"/srv/*", "allow"}, {u.store.string() + "/*", "allow"}});
  CHECK_FALSE(fs::exists(u.home / ".pi"));

  u.make_former();
  REQUIRE(u.setup("opencode").status == 0);
  CHECK(opencode_rules(u) ==
        json{{"/srv/*", "allow"}, {u.store.string() + "/*", "allow"}, {u.former.string() + "/*", "allow"}});
  const std::string installed = read_text(u.opencode_config);
  REQUIRE(u.setup("opencode").status == 0);
  CHECK(read_text(u.opencode_config) == installed);

  fs::remove(u.former);
  REQUIRE(u.setup("opencode").status == 0);
  CHECK(opencode_rules(u) == json{{"/srv/*", "allow"}, {u.store.string() + "/*", "allow"}});
  u.make_former();
  REQUIRE(u.setup("opencode").status == 0);
  REQUIRE(u.setup("opencode", {"--remove"}).status == 0);
  CHECK(opencode_rules(u) == json{{"/srv/*", "allow"}});
}
