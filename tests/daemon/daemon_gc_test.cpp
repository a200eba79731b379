// Store hygiene through a real handoffd: `daemon/gc` (and `handoff gc`) removes old, over-quota
// and stale temp files, and keeps every artifact an undelivered result, an unacknowledged
// delivery or a recent delivery points to; temps are swept at start; status counts the store.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <set>
#include <thread>

#include "engine/fs/sha256.hpp"
#include "support/daemon_process.hpp"
#include "support/fault_daemon.hpp"
#include "support/fs_fixtures.hpp"
#include "support/raw_client.hpp"
#include "support/temp_dir.hpp"

namespace fs = std::filesystem;
using namespace handoff::test;
using std::chrono::hours;
using std::chrono::minutes;

namespace {

void age(const fs::path& p, std::chrono::seconds by) {
  const auto t = std::chrono::system_clock::now() - by;
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
  const timespec times[2] = {{ns / 1'000'000'000, ns % 1'000'000'000}, {ns / 1'000'000'000, ns % 1'000'000'000}};
  REQUIRE(::utimensat(AT_FDCWD, p.c_str(), times, AT_SYMLINK_NOFOLLOW) == 0);
}

// An artifact written by hand (as an earlier run would have), aged `by`; returns its sha256.
std::string plant_artifact(const daemon_process& d, const std::string& text, std::chrono::seconds by) {
  const std::string sha = handoff::sha256_hex(text);
  write_file(d.artifact_dir() / (sha + ".txt"), text, 0600);
  age(d.artifact_dir() / (sha + ".txt"), by);
  return sha;
}

json complete(raw_client& c, const std::string& parent, const std::string& child, const std::string& text) {
  json r = c.call("subagent/completed",
                  {{"parentId", parent}, {"childId", child}, {"status", "done"}, {"finalText", text}});
  REQUIRE_MESSAGE(r.contains("result"), r.dump());
  return r["result"];
}

json gc(raw_client& c, bool dry_run) {
  json r = c.call("daemon/gc", {{"dryRun", dry_run}});
  REQUIRE_MESSAGE(r.contains("result"), r.dump());
  CHECK(r["result"]["problems"].empty());
  return r["result"];
}

std::set<std::string> removed_names(const json& result) {
  std::set<std::string> names;
  for (const json& e : result["removed"]) names.insert(e["name"].get<std::string>());
  return names;
}

bool in_store(const daemon_process& d, const std::string& sha) { return fs::exists(d.artifact_dir() / (sha + ".txt")); }

json expect_request(raw_client& c, const std::string& method) {
  json m = c.read(std::chrono::seconds(10));
  REQUIRE_MESSAGE(m.value("method", "") == method, m.dump());
  return m;
}

}  // namespace

TEST_CASE("daemon/gc removes old unreferenced artifacts and stale temps, keeps those still in use") {
  daemon_process d({"--gc-max-age-days", "1", "--gc-keep-delivered-s", "0", "--gc-interval-s", "0"});
  raw_client worker(d.socket());

  // Consumed by a wait: its artifact is referenced by nothing any more (keep-delivered is 0).
  const std::string consumed_text = numbered_report(30000, 400, "consumed");
  const std::string consumed = complete(worker, "p", "consumed", consumed_text)["sha256"];
  json w = worker.call("subagent/wait", {{"parentId", "p"}, {"childIds", {"consumed"}}, {"timeoutMs", 5000}});
  REQUIRE(w["result"]["sections"][0]["artifact"]["saved"] == true);

  // The parent registers only now, so the wait above did not ask it for its context usage.
  raw_client parent(d.socket());
  REQUIRE(parent.call("initialize", {{"parentId", "p"}, {"clientName", "gc-test"}})["result"]["parentId"] == "p");

  // Sent in an auto-delivery the parent has not acknowledged: referenced.
  const std::string unacked = complete(worker, "p", "unacked", numbered_report(30000, 400, "unacked"))["sha256"];
  parent.notify("parent/state", {{"parentId", "p"}, {"state", "idle"}});
  json ask = expect_request(parent, "context/usage");
  parent.send({{"jsonrpc", "2.0"}, {"id", ask["id"]}, {"result", nullptr}});
  json deliver = expect_request(parent, "parent/deliver");
  REQUIRE(deliver["params"]["sections"][0]["artifact"]["sha256"] == unacked);

  // Completed and never delivered (another parent, not idle); an earlier run left its artifact.
  const std::string held_text = numbered_report(30000, 400, "held");
  const std::string held = complete(worker, "q", "held", held_text)["sha256"];
  REQUIRE(plant_artifact(d, held_text, hours(72)) == held);

  // A stranger nobody references, and a temp file a crashed save left; a fresh temp stays.
  const std::string stranger = plant_artifact(d, numbered_report(5000, 50, "stranger"), hours(72));
  write_file(d.artifact_dir() / ".tmp-00000000deadbeef", "half a save", 0600);
  age(d.artifact_dir() / ".tmp-00000000deadbeef", minutes(5));
  write_file(d.artifact_dir() / ".tmp-00000000cafebabe", "a save in progress", 0600);
  for (const auto& sha : {consumed, unacked}) age(d.artifact_dir() / (sha + ".txt"), hours(72));

  const std::set<std::string> expected = {consumed + ".txt", stranger + ".txt", ".tmp-00000000deadbeef"};
  json dry = gc(worker, true);
  CHECK(dry["dryRun"] == true);
  CHECK(removed_names(dry) == expected);
  CHECK(dry["protectedFiles"] == 2);
  CHECK(in_store(d, consumed));  // a dry run removes nothing
  CHECK(in_store(d, stranger));

  json real = gc(worker, false);
  CHECK(removed_names(real) == expected);
  for (const json& e : real["removed"]) {
    if (e["sha256"].is_null()) CHECK(e["reason"] == "temp");
    else CHECK(e["reason"] == "age");
  }
  CHECK(real["keptFiles"] == 2);
  CHECK(real["protectedFiles"] == 2);
  CHECK_FALSE(in_store(d, consumed));
  CHECK_FALSE(in_store(d, stranger));
  CHECK_FALSE(fs::exists(d.artifact_dir() / ".tmp-00000000deadbeef"));
  CHECK(fs::exists(d.artifact_dir() / ".tmp-00000000cafebabe"));
  CHECK(in_store(d, unacked));
  CHECK(in_store(d, held));
  json status = worker.call("daemon/status", nullptr)["result"];
  CHECK(status["store"]["files"] == 2);
  CHECK(status["store"]["bytes"] == 60000);

  // Once acknowledged (and keep-delivered is 0), the delivered artifact is no longer protected.
  parent.send({{"jsonrpc", "2.0"}, {"id", deliver["id"]}, {"result", json::object()}});
  for (int i = 0; i < 200 && worker.call("daemon/status", nullptr)["result"]["queue"]["results"] != 1; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // poll, 4 s
  REQUIRE(worker.call("daemon/status", nullptr)["result"]["queue"]["results"] == 1);
  // The acknowledgement was stamped in milliseconds before the status saw it; gc protects what
  // was delivered at or after now - keep-delivered (0 s): a later millisecond, not an order.
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  CHECK(removed_names(gc(worker, false)) == std::set<std::string>{unacked + ".txt"});
  CHECK(in_store(d, held));
}

TEST_CASE("an artifact delivered within --gc-keep-delivered-s is kept however old its file") {
  daemon_process d({"--gc-max-age-days", "1", "--gc-interval-s", "0"});  // keep-delivered: 1 day
  raw_client c(d.socket());
  const std::string sha = complete(c, "p", "c", numbered_report(30000, 400, "recent"))["sha256"];
  json w = c.call("subagent/wait", {{"parentId", "p"}, {"childIds", {"c"}}, {"timeoutMs", 5000}});
  REQUIRE(w["result"]["sections"][0]["artifact"]["saved"] == true);
  age(d.artifact_dir() / (sha + ".txt"), hours(24 * 30));
  json r = gc(c, false);
  CHECK(r["removed"].empty());
  CHECK(r["protectedFiles"] == 1);
  CHECK(in_store(d, sha));
}

TEST_CASE("over --gc-max-bytes, the oldest unreferenced artifacts go first") {
  daemon_process d({"--gc-max-bytes", "30000", "--gc-interval-s", "0"});
  raw_client c(d.socket());
  const auto oldest = plant_artifact(d, numbered_report(20000, 100, "oldest"), hours(3));
  const auto middle = plant_artifact(d, numbered_report(20000, 100, "middle"), hours(2));
  const auto newest = plant_artifact(d, numbered_report(20000, 100, "newest"), hours(1));
  json r = gc(c, false);
  REQUIRE(r["removed"].size() == 2);
  CHECK(r["removed"][0]["sha256"] == oldest);
  CHECK(r["removed"][1]["sha256"] == middle);
  for (const json& e : r["removed"]) CHECK(e["reason"] == "size");
  CHECK(r["keptBytes"] == 20000);
  CHECK(r["overQuota"] == false);
  CHECK(in_store(d, newest));
}

TEST_CASE("daemon/gc refuses a dryRun that is not a boolean") {
  daemon_process d({"--gc-interval-s", "0"});
  raw_client c(d.socket());
  json r = c.call("daemon/gc", {{"dryRun", "yes"}});
  REQUIRE(r.contains("error"));
  CHECK(r["error"]["code"] == -32602);
  CHECK(r["error"]["message"].get<std::string>().find("dryRun") != std::string::npos);
}

TEST_CASE("stale temp files are swept when handoffd starts, even with periodic collection off") {
  daemon_process d({"--gc-interval-s", "0"});
  write_file(d.artifact_dir() / ".tmp-0000000000000001", "crashed save", 0600);
  age(d.artifact_dir() / ".tmp-0000000000000001", minutes(10));
  const auto ancient = plant_artifact(d, "an artifact from long ago", hours(24 * 365));
  REQUIRE(d.stop() == 0);
  d.start();
  bool swept = false;
  for (int i = 0; i < 500 && !swept; ++i) {
    swept = !fs::exists(d.artifact_dir() / ".tmp-0000000000000001");
    if (!swept) std::this_thread::sleep_for(std::chrono::milliseconds(10));  // poll, 5 s
  }
  CHECK(swept);
  CHECK(in_store(d, ancient));  // periodic collection is off: only temps go
}

TEST_CASE("handoff gc --dry-run lists what would go, and handoff gc removes it") {
  daemon_process d({"--gc-max-age-days", "1", "--gc-interval-s", "0"});
  const auto old = plant_artifact(d, numbered_report(3000, 30, "old"), hours(48));
  const std::string cli = std::string(HANDOFF_CLI_PATH) + " gc --socket " + d.socket().string();
  auto run = [](const std::string& command) {
    std::string out;
    FILE* p = ::popen((command + " 2>&1").c_str(), "r");
    REQUIRE(p != nullptr);
    char buf[4096];
    while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
    const int status = ::pclose(p);
    return std::make_pair(WIFEXITED(status) ? WEXITSTATUS(status) : -1, out);
  };
  auto [dry_status, dry_out] = run(cli + " --dry-run --json");
  CHECK(dry_status == 0);
  const json dry = json::parse(dry_out);
  REQUIRE(dry["removed"].size() == 1);
  CHECK(dry["removed"][0]["sha256"] == old);
  CHECK(in_store(d, old));

  auto [status, out] = run(cli);
  CHECK(status == 0);
  CHECK_MESSAGE(out.find("removed 1 file (2.9 KiB)") != std::string::npos, out);
  CHECK(out.find(old) != std::string::npos);
  CHECK_FALSE(in_store(d, old));
}

TEST_CASE("status counts the store right after every change, also when it answers from its last listing") {
  daemon_process d;
  raw_client c(d.socket());
  auto files = [&] { return c.call("daemon/status", nullptr)["result"]["store"]["files"].get<int>(); };
  auto save_one = [&](const std::string& child) {
    REQUIRE(c.call("subagent/completed", {{"parentId", "p"}, {"childId", child}, {"status", "done"},
                                          {"finalText", numbered_report(30000, 300, child)}})
                .contains("result"));
    const json w = c.call("subagent/wait", {{"parentId", "p"}, {"childIds", {child}}, {"timeoutMs", 10000}});
    REQUIRE(w["result"]["sections"][0]["artifact"]["saved"] == true);
  };
  CHECK(files() == 0);
  save_one("a");
  // Once the directory has been quiet for a while, the listing is kept and reused... (Each 200 ms
  // below is that quiet time, longer than store_listing's 50 ms settle: what is tested.)
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  CHECK(files() == 1);
  CHECK(files() == 1);
  // ...until the next change: a save, a removal by someone else, a file planted by hand.
  save_one("b");
  CHECK(files() == 2);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  CHECK(files() == 2);
  fs::remove(d.artifact_dir() / (handoff::sha256_hex(numbered_report(30000, 300, "a")) + ".txt"));
  CHECK(files() == 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  CHECK(files() == 1);
  plant_artifact(d, "planted by hand", std::chrono::seconds(0));
  CHECK(files() == 2);
}

TEST_CASE("daemon/status sees each change to a quiet store at once, also after the directory is replaced") {
  daemon_process d;
  raw_client c(d.socket());
  auto files = [&] { return c.call("daemon/status", nullptr)["result"]["store"]["files"].get<int>(); };
  // Each round: a quiet directory, so the listing is kept and reused; then a file planted by
  // hand, which the very next status must count (the store's watch drops the listing first).
  auto rounds = [&](int from, int count) {
    for (int i = from; i < from + count; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(120));  // quiet past store_listing's 50 ms settle
      REQUIRE(files() == i);
      REQUIRE(files() == i);
      plant_artifact(d, "planted by hand " + std::to_string(i), std::chrono::seconds(0));
      REQUIRE(files() == i + 1);
    }
  };
  rounds(0, 10);
  // The directory moved away and a new one in its place: the watch followed the old one, so
  // status reads the new one's mtime from now on, and still misses nothing.
  fs::rename(d.artifact_dir(), d.artifact_dir().string() + ".old");
  fs::create_directory(d.artifact_dir());
  fs::permissions(d.artifact_dir(), fs::perms::owner_all, fs::perm_options::replace);
  CHECK(files() == 0);
  rounds(0, 5);
}

// A wait's results leave the queue on the pool after its reply, once the artifacts it named are
// synced (docs/design.md §7); until then they protect those artifacts. A collection asked after
// the reply waits for those removals, as daemon/status does: with the artifact's fsync held back
// half a second, the consumed artifact is still what it removes.
TEST_CASE("daemon/gc right after a wait's reply sees its results consumed, however slow their artifacts' sync") {
  daemon_process d({"--gc-max-age-days", "1", "--gc-keep-delivered-s", "0", "--gc-interval-s", "0"});
  raw_client c(d.socket());
  const std::string text = numbered_report(30000, 400, "slow sync");
  const std::string sha = complete(c, "p", "slow", text)["sha256"];
  const fs::path artifact = d.artifact_dir() / (sha + ".txt");

  temp_dir run("gc-slow-sync");
  syscall_fault slow_sync(d.pid(), artifact, "fsync", "delay_exit=500000", run / "strace.log");
  if (!slow_sync.attached()) {
    cannot_inject("cannot slow fsync down here: " + slow_sync.why_not());
    return;
  }
  const json w = c.call("subagent/wait", {{"parentId", "p"}, {"childIds", {"slow"}}, {"timeoutMs", 5000}});
  REQUIRE_MESSAGE(w.contains("result"), w.dump());
  REQUIRE(w["result"]["sections"][0]["artifact"]["saved"] == true);
  age(artifact, hours(72));
  const json dry = gc(c, true);
  CHECK(removed_names(dry) == std::set<std::string>{sha + ".txt"});
  CHECK(dry["protectedFiles"] == 0);
  CHECK_MESSAGE(slow_sync.log().find("fsync") != std::string::npos, "the sync was not held back: " << slow_sync.log());
}
