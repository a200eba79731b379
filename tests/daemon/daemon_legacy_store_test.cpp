// The artifact store's move to handoff's own cache directory, through a real handoffd run as a
// user runs it (no --artifact-dir, HOME and the XDG variables in a temporary directory): a user
// without Pi gets no Pi directory, and after an upgrade the artifacts an older footer names in
// the former default store stay readable, drain by the store's own age rules, and the emptied
// directory goes (docs/design.md §7).
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>

#include <chrono>
#include <optional>
#include <thread>

#include "engine/fs/sha256.hpp"
#include "support/fs_fixtures.hpp"
#include "support/process.hpp"
#include "support/raw_client.hpp"
#include "support/socket_probe.hpp"
#include "support/temp_dir.hpp"

namespace fs = std::filesystem;
using namespace handoff::test;
using std::chrono::hours;

namespace {

// A user of its own, and handoffd started for it with the defaults it would get.
struct upgrade_user {
  temp_dir dir{"handoff-upgrade"};
  fs::path home = dir / "home";
  fs::path agent = dir / "agent";  // PI_CODING_AGENT_DIR
  fs::path store = dir / "cache" / "handoff" / "results";
  fs::path former = agent / "cache" / "openpi" / "subagent-results";
  fs::path socket = dir / "run" / "handoffd.sock";
  fs::path log = dir / "handoffd.log";
  std::optional<process> daemon;

  upgrade_user() {
    fs::create_directories(home);
    fs::create_directories(dir / "run");
    fs::permissions(dir / "run", fs::perms::owner_all, fs::perm_options::replace);
  }

  void start(const std::vector<std::string>& extra = {}) {
    std::vector<std::string> argv = {HANDOFFD_PATH, "--socket", socket.string(), "--queue-dir",
                                     (dir / "queue").string(), "--gc-interval-s", "0", "--log-level", "debug"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    process_spec spec = logged(std::move(argv), log);
    spec.env = {"HOME=" + home.string(), "XDG_CACHE_HOME=" + (dir / "cache").string(),
                "PI_CODING_AGENT_DIR=" + agent.string()};
    daemon.emplace(std::move(spec));
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!socket_accepts(socket)) {
      REQUIRE_MESSAGE(daemon->running(), read_log(log));
      REQUIRE_MESSAGE(std::chrono::steady_clock::now() < deadline, read_log(log));
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  void stop() {
    CHECK(daemon->stop() == 0);
    daemon.reset();
  }
};

bool mentions(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

void age_file(const fs::path& p, std::chrono::seconds by) {
  const auto t = std::chrono::system_clock::now() - by;
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
  const timespec times[2] = {{ns / 1'000'000'000, ns % 1'000'000'000}, {ns / 1'000'000'000, ns % 1'000'000'000}};
  REQUIRE(::utimensat(AT_FDCWD, p.c_str(), times, AT_SYMLINK_NOFOLLOW) == 0);
}

// Completes `text` as child `child` of parent "p" and waits for it: the footer's artifact path.
std::string deliver_long(raw_client& c, const std::string& child, const std::string& text) {
  const json done = c.call("subagent/completed",
                           {{"parentId", "p"}, {"childId", child}, {"status", "done"}, {"finalText", text}});
  REQUIRE_MESSAGE(done.contains("result"), done.dump());
  const json w = c.call("subagent/wait", {{"parentId", "p"}, {"childIds", {child}}, {"timeoutMs", 5000}});
  REQUIRE_MESSAGE(w.contains("result"), w.dump());
  const json& artifact = w["result"]["sections"][0]["artifact"];
  REQUIRE(artifact["saved"] == true);
  const std::string path = artifact["path"];
  CHECK(mentions(w["result"]["text"].get<std::string>(), path));  // the footer names it
  return path;
}

json collect_now(raw_client& c) {
  const json r = c.call("daemon/gc", {{"dryRun", false}});
  REQUIRE_MESSAGE(r.contains("result"), r.dump());
  CHECK(r["result"]["problems"].empty());
  return r["result"];
}

}  // namespace

TEST_CASE("a user without Pi gets the store in handoff's cache directory and no Pi directory") {
  upgrade_user u;
  u.start();
  raw_client c(u.socket);
  const json init = c.call("initialize", {{"parentId", "p"}, {"clientName", "upgrade-test"}});
  CHECK(init["result"]["artifactDir"] == u.store.string());
  const std::string text = numbered_report(40000, 600, "fresh");
  const std::string path = deliver_long(c, "c", text);
  CHECK(path == (u.store / (handoff::sha256_hex(text) + ".txt")).string());
  CHECK(read_file(path) == text);
  CHECK(mode_of(u.store) == 0700);
  CHECK(mode_of(path) == 0600);
  collect_now(c);
  u.stop();
  CHECK_FALSE(fs::exists(u.agent));
  CHECK_FALSE(fs::exists(u.home / ".pi"));
}

TEST_CASE("after an upgrade an older footer's artifact is read where it names it, then drains by age with its directory") {
  upgrade_user u;
  // An older handoffd, whose default store was the one under Pi's agent directory.
  u.start({"--artifact-dir", u.former.string()});
  raw_client before(u.socket);
  const std::string old_text = numbered_report(40000, 600, "before the upgrade");
  const std::string old_sha = handoff::sha256_hex(old_text);
  const std::string old_path = deliver_long(before, "old", old_text);
  CHECK(old_path == (u.former / (old_sha + ".txt")).string());
  before.close();
  u.stop();
  // An artifact no result refers to any more, as old as the age limit lets go.
  const std::string stray_text = numbered_report(20000, 100, "stray");
  const fs::path stray = u.former / (handoff::sha256_hex(stray_text) + ".txt");
  write_file(stray, stray_text, 0600);
  age_file(stray, hours(24 * 8));

  // The upgrade: the same user's handoffd with its new default.
  u.start();
  raw_client c(u.socket);
  const json read = c.call("artifact/read", {{"sha256", old_sha}, {"offset", 300}, {"limit", 5}});
  REQUIRE_MESSAGE(read.contains("result"), read.dump());
  CHECK(read["result"]["path"] == old_path);
  CHECK(read["result"]["firstLine"] == 300);
  CHECK(mentions(old_text, read["result"]["text"].get<std::string>()));
  CHECK(read_file(old_path) == old_text);  // where the footer says, for the harness's own read
  // New artifacts go to the new store; nothing new goes to the former one.
  const std::string new_text = numbered_report(40000, 600, "after the upgrade");
  CHECK(deliver_long(c, "new", new_text) == (u.store / (handoff::sha256_hex(new_text) + ".txt")).string());
  CHECK_FALSE(fs::exists(u.former / (handoff::sha256_hex(new_text) + ".txt")));

  // The store's rules: the stray is old and unreferenced, so it goes; the delivered one is kept
  // however old while its delivery is recent (--gc-keep-delivered-s, a day).
  age_file(old_path, hours(24 * 8));
  collect_now(c);
  CHECK_FALSE(fs::exists(stray));
  CHECK(fs::exists(old_path));
  CHECK(mode_of(u.former) == 0700);
  c.close();
  u.stop();

  // A day on (as --gc-keep-delivered-s 0 makes it): the last one goes, then the emptied
  // directory and the `openpi` made for it; Pi's own directories stay.
  u.start({"--gc-keep-delivered-s", "0"});
  raw_client later(u.socket);
  collect_now(later);
  CHECK_FALSE(fs::exists(old_path));
  CHECK_FALSE(fs::exists(u.former));
  CHECK_FALSE(fs::exists(u.former.parent_path()));
  CHECK(fs::is_directory(u.agent / "cache"));
  const json gone = later.call("artifact/read", {{"sha256", old_sha}});
  CHECK(gone.contains("error"));
  // The new store's artifact is younger than the age limit: kept.
  CHECK(read_file(u.store / (handoff::sha256_hex(new_text) + ".txt")) == new_text);
  collect_now(later);  // with nothing left to drain, nothing is made again
  later.close();
  u.stop();
  CHECK_FALSE(fs::exists(u.former));
  CHECK(mentions(read_log(u.log), "it was empty and is removed"));
}

TEST_CASE("a former store that is a symlink, or any store beside one the user named, is never read nor collected") {
  upgrade_user u;
  const std::string text = numbered_report(20000, 100, "elsewhere");
  const std::string sha = handoff::sha256_hex(text);
  const fs::path target = u.dir / "elsewhere";
  fs::create_directories(target);
  fs::permissions(target, fs::perms::owner_all, fs::perm_options::replace);
  write_file(target / (sha + ".txt"), text, 0600);
  age_file(target / (sha + ".txt"), hours(24 * 8));
  fs::create_directories(u.former.parent_path());
  fs::create_directory_symlink(target, u.former);
  u.start();
  {
    raw_client c(u.socket);
    CHECK(c.call("artifact/read", {{"sha256", sha}}).contains("error"));
    collect_now(c);
  }
  u.stop();
  CHECK(fs::is_symlink(u.former));
  CHECK(read_file(target / (sha + ".txt")) == text);

  // A real former store, but the user named the store: the former one is not theirs to drain.
  fs::remove(u.former);
  fs::create_directory(u.former);
  fs::permissions(u.former, fs::perms::owner_all, fs::perm_options::replace);
  write_file(u.former / (sha + ".txt"), text, 0600);
  age_file(u.former / (sha + ".txt"), hours(24 * 8));
  u.start({"--artifact-dir", (u.dir / "chosen").string()});
  {
    raw_client c(u.socket);
    CHECK(c.call("artifact/read", {{"sha256", sha}}).contains("error"));
    collect_now(c);
  }
  u.stop();
  CHECK(read_file(u.former / (sha + ".txt")) == text);
}
