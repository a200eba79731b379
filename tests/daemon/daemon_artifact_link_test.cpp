// A real handoffd saving a cut result's full text: the queue's file is hard-linked into the store
// when both are on one filesystem, and copied (with the reason in the log) when they are not.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include "engine/fs/sha256.hpp"
#include "support/daemon_process.hpp"
#include "support/fs_fixtures.hpp"
#include "support/raw_client.hpp"

namespace fs = std::filesystem;
using namespace handoff::test;

namespace {

constexpr std::size_t text_bytes = 1024 * 1024;  // a file in the queue, cut by any wait cap

struct stat stat_at(const fs::path& p) {
  struct stat st {};
  REQUIRE_MESSAGE(::lstat(p.c_str(), &st) == 0, p.string());
  return st;
}

// Completes one child with `text` and returns the queue's file of it (checked to exist).
fs::path complete(raw_client& c, const daemon_process& d, const std::string& text) {
  const json r = c.call("subagent/completed",
                        {{"parentId", "p"}, {"childId", "c"}, {"status", "done"}, {"finalText", text}});
  REQUIRE_MESSAGE(r.contains("result"), r.dump());
  const fs::path queued = d.queue_dir() / "texts" / (handoff::sha256_hex(text) + ".txt");
  REQUIRE_MESSAGE(fs::is_regular_file(queued), "the queue keeps a 1 MiB text as " << queued.string());
  return queued;
}

// Waits for the child and returns its saved artifact's path (content checked).
fs::path wait_for_artifact(raw_client& c, const std::string& text) {
  const json r = c.call("subagent/wait", {{"parentId", "p"}, {"childIds", {"c"}}, {"timeoutMs", 5000}});
  REQUIRE_MESSAGE(r.contains("result"), r.dump());
  const json& section = r["result"]["sections"].at(0);
  REQUIRE(section["truncated"] == true);
  REQUIRE_MESSAGE(section["artifact"]["saved"] == true, section["artifact"].dump());
  const fs::path path = section["artifact"]["path"].get<std::string>();
  CHECK(read_file(path) == text);
  CHECK((stat_at(path).st_mode & 07777) == 0600);
  return path;
}

}  // namespace

TEST_CASE("with the store beside the queue, a wait's artifact is the queue's own file, linked") {
  daemon_process d;
  raw_client c(d.socket());
  const std::string text = numbered_report(text_bytes, 12000, "linked");
  const fs::path queued = complete(c, d, text);
  const struct stat before = stat_at(queued);

  const fs::path artifact = wait_for_artifact(c, text);
  const struct stat after = stat_at(artifact);
  CHECK(after.st_dev == before.st_dev);
  CHECK(after.st_ino == before.st_ino);
  CHECK(d.log().find("written as a copy") == std::string::npos);
}

TEST_CASE("with the store on another filesystem (/dev/shm), the artifact is a copy and the log says why") {
  temp_dir probe;
  if (!fs::is_directory("/dev/shm") || stat_at("/dev/shm").st_dev == stat_at(probe.path()).st_dev) {
    MESSAGE("skipped: no /dev/shm on another filesystem than the temporary directory");
    return;
  }
  const fs::path store = fs::path("/dev/shm") / ("handoff-daemon-link-test-" + std::to_string(::getpid()));
  struct cleanup {
    fs::path p;
    ~cleanup() { fs::remove_all(p); }
  } remove_store{store};
  daemon_process d({"--artifact-dir", store.string()});
  raw_client c(d.socket());
  const std::string text = numbered_report(text_bytes, 12000, "copied");
  const fs::path queued = complete(c, d, text);
  const struct stat before = stat_at(queued);

  const fs::path artifact = wait_for_artifact(c, text);
  CHECK(artifact.parent_path() == store);
  CHECK(stat_at(artifact).st_dev != before.st_dev);
  const std::string log = d.log();
  INFO("log: ", log);
  CHECK(log.find("written as a copy, not linked from the queue") != std::string::npos);
  CHECK(log.find("Invalid cross-device link") != std::string::npos);
}

TEST_CASE("a cut inline result's artifact is written into the file with no name made after the previous answer") {
  daemon_process d;
  raw_client c(d.socket());
  // The daemon makes one at start, and another after each answer that used its spare.
  std::vector<ino_t> spare = unnamed_files_after(d.artifact_dir(), {}, d.pid());
  for (const std::string child : {"first", "second"}) {
    CAPTURE(child);
    REQUIRE(spare.size() == 1);
    const std::string text = numbered_report(100 * 1024, 1500, child);  // inline in the journal, cut at 16 KiB
    const json done = c.call("subagent/completed",
                             {{"parentId", "p"}, {"childId", child}, {"status", "done"}, {"finalText", text}});
    REQUIRE_MESSAGE(done.contains("result"), done.dump());
    const json r = c.call("subagent/wait", {{"parentId", "p"}, {"childIds", {child}}, {"timeoutMs", 5000}});
    REQUIRE_MESSAGE(r.contains("result"), r.dump());
    const json& artifact = r["result"]["sections"].at(0)["artifact"];
    REQUIRE_MESSAGE(artifact["saved"] == true, artifact.dump());
    const fs::path path = artifact["path"].get<std::string>();
    CHECK(read_file(path) == text);
    CHECK((stat_at(path).st_mode & 07777) == 0600);
    CHECK(stat_at(path).st_ino == spare[0]);
    const std::vector<ino_t> next = unnamed_files_after(d.artifact_dir(), spare, d.pid());
    REQUIRE(next.size() == 1);
    CHECK(next[0] != spare[0]);
    spare = next;
  }
}
