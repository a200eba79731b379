// Storage faults against a real handoffd (issue 6, part 3; docs/design.md §7 and §8).
//
// The artifact store: a cut result is still delivered, head and tail, with saved:false and the
// reason, no temp or partial file is left, and saving resumes once the disk does.
// The queue: a completion the disk refused is answered -32005 and never acknowledged (it is not
// there after a restart), and the same completion sent again once the disk is back is taken.
//
// How each fault is made: ENOSPC and EROFS for real, on a small tmpfs shrunk or remounted
// read-only, when the test may mount (root, as in CI); otherwise, and for EACCES (which root
// does not get from permission bits), strace attached to the daemon injects the errno into its
// openat calls on that one directory. A case that can do neither says so and skips.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "engine/fs/sha256.hpp"
#include "support/fault_daemon.hpp"
#include "support/fs_fixtures.hpp"
#include "support/raw_client.hpp"
#include "support/temp_dir.hpp"

using namespace handoff::test;
namespace fs = std::filesystem;

namespace {

// A test's directories: the socket's, and one mount point each for the store and the queue.
struct sandbox {
  temp_dir tmp{"handoff-faults"};
  fs::path run = tmp / "run";
  fs::path store_mount = tmp / "store-fs";
  fs::path queue_mount = tmp / "queue-fs";
  fs::path artifacts = store_mount / "artifacts";
  fs::path queue = queue_mount / "queue";

  sandbox() {
    for (const auto& d : {run, store_mount, queue_mount}) {
      fs::create_directory(d);
      fs::permissions(d, fs::perms::owner_all, fs::perm_options::replace);
    }
  }
  handoffd_at::dirs dirs() const { return {run, artifacts, queue}; }
};

enum class fault_kind { no_space, read_only, no_permission };

const char* errno_name(fault_kind k) {
  switch (k) {
    case fault_kind::no_space: return "ENOSPC";
    case fault_kind::read_only: return "EROFS";
    case fault_kind::no_permission: return "EACCES";
  }
  return "";
}

// strerror's words, which the reason and the error message carry.
const char* errno_words(fault_kind k) {
  switch (k) {
    case fault_kind::no_space: return "No space left on device";
    case fault_kind::read_only: return "Read-only file system";
    case fault_kind::no_permission: return "Permission denied";
  }
  return "";
}

// One fault on one directory, begun and ended while the daemon runs. Built before the daemon
// starts: the tmpfs (4 MiB, roomy) must be under the directory when it is created.
class storage_fault {
 public:
  storage_fault(fault_kind kind, const fs::path& mount_point) : kind_(kind), at_(mount_point) {
    if (kind != fault_kind::no_permission) mount_.emplace(mount_point, "size=4m");
  }

  // Makes writes in `dir` fail. False (with why()) when this environment can make no such fault.
  // `syscall` is what strace makes fail on `dir` (a directory, or a file written through an fd).
  // The default is what a directory without write permission refuses: creating a file (openat)
  // and linking one in (linkat: the artifact store links the queue's file when it can).
  bool begin(pid_t daemon, const fs::path& dir, const fs::path& strace_log,
             const std::string& syscall = "openat,linkat") {
    if (real()) {
      // Shrunk below any text the tests send, or read-only; files already there stay readable.
      if (kind_ == fault_kind::no_space) return remount_tmpfs(at_, "size=64k");
      if (remount_tmpfs(at_, "", /*read_only=*/true)) return true;
      // A read-only remount is refused (EBUSY) while a file on it is open for writing, as the
      // queue's journal is: any filesystem does that. EROFS is then injected instead.
      refused_remount_ = true;
    }
    strace_.emplace(daemon, dir, syscall, errno_name(kind_), strace_log);
    if (strace_->attached()) return true;
    why_ = (mount_ ? "cannot mount a tmpfs (" + mount_->why_not() + ") and " : std::string()) +
           strace_->why_not();
    strace_.reset();
    return false;
  }
  // The disk is back: room again, writable again, or strace detached.
  void end() {
    if (real()) {
      const bool back = kind_ == fault_kind::no_space ? remount_tmpfs(at_, "size=4m")
                                                      : remount_tmpfs(at_, "");
      REQUIRE(back);
    }
    strace_.reset();
  }
  // A real filesystem condition (not an injected errno): files already there stay usable.
  bool real() const { return mount_ && mount_->mounted() && !refused_remount_; }
  const std::string& why() const { return why_; }

 private:
  fault_kind kind_;
  fs::path at_;
  std::optional<tmpfs_mount> mount_;
  std::optional<syscall_fault> strace_;
  std::string why_;
  bool refused_remount_ = false;  // the tmpfs would not go read-only: the errno is injected
};

json complete(raw_client& c, const std::string& child, const std::string& text) {
  return c.call("subagent/completed",
                {{"parentId", "p"}, {"childId", child}, {"status", "done"}, {"finalText", text}});
}

// Completes `child` and waits for it; returns its one section.
json complete_and_wait(raw_client& c, const std::string& child, const std::string& text) {
  const json done = complete(c, child, text);
  REQUIRE_MESSAGE(done.contains("result"), done.dump());
  const json r = c.call("subagent/wait", {{"parentId", "p"}, {"childIds", {child}}, {"timeoutMs", 20000}});
  REQUIRE_MESSAGE(r.contains("result"), r.dump());
  REQUIRE(r["result"]["sections"].size() == 1);
  return r["result"]["sections"][0];
}

// Another connection is answered, and a result within the caps comes back byte for byte.
void still_serving(const fs::path& socket, const std::string& child) {
  raw_client other(socket);
  CHECK(other.call("daemon/status", nullptr).contains("result"));
  const std::string small = "a short result\nthat fits\n";
  const json s = complete_and_wait(other, child, small);
  CHECK(s["text"] == small);
  CHECK(s["truncated"] == false);
}

// True when every thread of `pid` is asleep ('S' in its stat), on two looks 50 ms apart.
bool all_threads_asleep(pid_t pid) {
  const auto look = [pid] {
    const fs::path tasks = "/proc/" + std::to_string(pid) + "/task";
    for (const auto& task : fs::directory_iterator(tasks)) {
      std::ifstream in(task.path() / "stat");
      std::string line;
      if (!std::getline(in, line) || line.at(line.rfind(')') + 2) != 'S') return false;
    }
    return true;
  };
  if (!look()) return false;
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // a second look: asleep, not passing through
  return look();
}

// What the queue holds on disk, "area/name": its texts and tombstones, and its journal
// segments that hold entries (not only the zeros written ahead of them).
std::vector<std::string> queue_files(const fs::path& queue) {
  std::vector<std::string> out;
  for (const char* area : {"texts", "done", "journal"}) {
    if (!fs::exists(queue / area)) continue;
    for (const auto& n : names_in(queue / area))
      if (std::string(area) != "journal" || journal_end(queue / area / n) != 0) out.push_back(std::string(area) + "/" + n);
  }
  return out;
}

void check_store_fault(fault_kind kind) {
  sandbox box;
  storage_fault fault(kind, box.store_mount);
  handoffd_at d(box.dirs());
  raw_client c(d.socket());

  // Saved before the fault: it is what the store may hold afterwards, and nothing else. Cut
  // (over the 16 KiB wait cap) yet small enough for the shrunk tmpfs to keep holding it.
  const std::string before = numbered_report(20000, 300, "before");
  const json first = complete_and_wait(c, "before", before);
  REQUIRE(first["artifact"]["saved"] == true);
  const std::string before_name = handoff::sha256_hex(before) + ".txt";

  if (!fault.begin(d.pid(), box.artifacts, box.run / "strace.log")) {
    cannot_inject("cannot make " + std::string(errno_name(kind)) + " here: " + fault.why());
    return;
  }
  const std::string text = numbered_report(300000, 4000, "during");
  const std::string sha = handoff::sha256_hex(text);
  const json s = complete_and_wait(c, "during", text);
  CHECK(s["truncated"] == true);
  CHECK(s["artifact"]["saved"] == false);
  CHECK(s["artifact"]["sha256"] == sha);
  CHECK_FALSE(s["artifact"].contains("path"));
  const std::string reason = s["artifact"].value("reason", "");
  CHECK_MESSAGE(reason.find(errno_words(kind)) != std::string::npos, reason);
  // Head and tail are there; the footer says plainly the full text was not kept, and names no
  // path (there is no file to read).
  const std::string shown = s["text"];
  CHECK(shown.rfind("BEGIN during", 0) == 0);
  CHECK(shown.find("END during") != std::string::npos);
  CHECK(shown.find("Full text NOT saved") != std::string::npos);
  CHECK(shown.find(errno_words(kind)) != std::string::npos);
  CHECK(shown.find(sha + ".txt") == std::string::npos);
  CHECK(shown.find("offset=") == std::string::npos);
  // No temp file, no partial file: the store holds exactly what it held.
  CHECK(names_in(box.artifacts) == std::vector<std::string>{before_name});
  const json page = c.call("artifact/read", {{"sha256", sha}});
  CHECK(page["error"]["code"] == -32007);
  if (fault.real()) {
    // A file saved before is still verified and reused: nothing needs writing for it.
    CHECK(complete_and_wait(c, "before-again", before)["artifact"]["saved"] == true);
  }
  still_serving(d.socket(), "small-during");

  fault.end();
  const std::string after = numbered_report(250000, 3500, "after");
  const json later = complete_and_wait(c, "after", after);
  REQUIRE(later["artifact"]["saved"] == true);
  const fs::path path = later["artifact"]["path"].get<std::string>();
  CHECK(path == box.artifacts / (handoff::sha256_hex(after) + ".txt"));
  CHECK(read_file(path) == after);
  CHECK(mode_of(path) == 0600);
  CHECK(names_in(box.artifacts).size() == 2);
  CHECK(d.alive());
}

// `area` is where the fault hits: "texts" (the final text, 1.1 MB so kept as a file, is
// refused) or "journal" (the text is stored, then the journal's append is refused and the text
// must go again).
void check_queue_fault(fault_kind kind, const char* area) {
  sandbox box;
  storage_fault fault(kind, box.queue_mount);
  handoffd_at d(box.dirs());
  raw_client c(d.socket());
  REQUIRE(c.call("subagent/started", {{"parentId", "p"}, {"childId", "lost"}}).contains("result"));

  const bool journal = std::string(area) == "journal";
  const fs::path target = journal ? box.queue / "journal" / "0000000000000001.log" : box.queue / area;
  if (!fault.begin(d.pid(), target, box.run / "strace.log", journal ? "pwritev" : "openat")) {
    cannot_inject("cannot make " + std::string(errno_name(kind)) + " here: " + fault.why());
    return;
  }
  const std::string text = numbered_report(1'100'000, 14000, "lost");  // over file_text_bytes (1 MiB)
  const json refused = complete(c, "lost", text);
  REQUIRE_MESSAGE(refused.contains("error"), refused.dump());
  CHECK(refused["error"]["code"] == -32005);
  const std::string message = refused["error"]["message"];
  CHECK_MESSAGE(message.find("not acknowledged") != std::string::npos, message);
  CHECK_MESSAGE(message.find(errno_words(kind)) != std::string::npos, message);
  // Nothing half-written: no temp file, no text without a record, no record.
  CHECK(queue_files(box.queue).empty());
  // Not acknowledged means not completed: the child still runs, and nothing is queued.
  CHECK(c.call("subagent/check", {{"parentId", "p"}, {"childId", "lost"}})["result"]["state"] ==
        "running");
  CHECK(c.call("daemon/status", nullptr)["result"]["queue"]["results"] == 0);
  CHECK(d.alive());

  // After a crash and restart it is not there either (the fault still holds for a tmpfs; an
  // injected one ends with the process it was attached to).
  d.kill_hard();
  d.start();
  raw_client after(d.socket());
  CHECK(after.call("daemon/status", nullptr)["result"]["queue"]["results"] == 0);
  CHECK(after.call("subagent/check", {{"parentId", "p"}, {"childId", "lost"}})["error"]["code"] ==
        -32001);
  CHECK(queue_files(box.queue).empty());

  // The disk is back: the client's retry of the same completion is taken and delivered whole.
  fault.end();
  const json retried = complete(after, "lost", text);
  REQUIRE_MESSAGE(retried.contains("result"), retried.dump());
  CHECK(retried["result"]["duplicate"] == false);
  const json r = after.call("subagent/wait", {{"parentId", "p"}, {"childIds", {"lost"}}, {"timeoutMs", 20000}});
  REQUIRE(r["result"]["sections"].size() == 1);
  const json artifact = r["result"]["sections"][0]["artifact"];
  REQUIRE(artifact["saved"] == true);
  CHECK(read_file(artifact["path"].get<std::string>()) == text);
}

}  // namespace

TEST_CASE("a full artifact store still delivers the projection with saved false and leaves nothing") {
  check_store_fault(fault_kind::no_space);
}

TEST_CASE("a read-only artifact store still delivers the projection with saved false") {
  check_store_fault(fault_kind::read_only);
}

TEST_CASE("permission denied in the artifact store still delivers the projection with saved false") {
  check_store_fault(fault_kind::no_permission);
}

// Group commit's window: the group's entries are written, its fdatasync not yet begun. A kill
// there (strace delivers SIGKILL as a thread enters fdatasync on the journal: the writer, or
// the pool thread that writes a put alone) answers
// nobody; the restarted daemon recovers cleanly, and the client's retry of the same completion
// is taken or recognised, then delivered whole, once.
TEST_CASE("killed between a group's writes and its fsync: recovery is clean and the retry is delivered once") {
  sandbox box;
  handoffd_at d(box.dirs());
  raw_client c(d.socket());
  const std::string before = "acknowledged before the kill\n";
  REQUIRE(complete(c, "before", before).contains("result"));
  const fs::path segment = box.queue / "journal" / "0000000000000001.log";
  // The writer lays zeros down ahead of the entries (journal::zero_ahead), with an fdatasync of
  // its own, after the group: the fault is attached once every thread of the daemon sleeps
  // (twice, 50 ms apart), so the next fdatasync on the segment is the group's.
  REQUIRE_MESSAGE(eventually([&] { return all_threads_asleep(d.pid()); }, std::chrono::seconds(10)),
                  "the daemon did not go idle");
  const auto end_before = journal_end(segment);

  syscall_fault kill_at_sync(d.pid(), segment, "fdatasync", "signal=KILL", box.run / "strace.log");
  if (!kill_at_sync.attached()) {
    cannot_inject("cannot kill at fdatasync here: " + kill_at_sync.why_not());
    return;
  }
  const std::string text = numbered_report(40000, 600, "in-flight");  // inline in the journal
  CHECK_THROWS(complete(c, "in-flight", text));  // no answer: the daemon died in the group
  REQUIRE(eventually([&] { return !d.alive(); }, std::chrono::seconds(20)));
  kill_at_sync.end();
  CHECK(journal_end(segment) > end_before);  // the group's bytes were written

  d.kill_hard();
  d.start();
  raw_client after(d.socket());
  const std::string log = d.log();
  CHECK_MESSAGE(log.find("dropped") == std::string::npos, log);
  const json retried = complete(after, "in-flight", text);
  REQUIRE_MESSAGE(retried.contains("result"), retried.dump());
  const json r = after.call("subagent/wait", {{"parentId", "p"}, {"childIds", {"before", "in-flight"}}, {"timeoutMs", 20000}});
  REQUIRE_MESSAGE(r.contains("result"), r.dump());
  REQUIRE(r["result"]["sections"].size() == 2);
  for (const json& s : r["result"]["sections"]) {
    const std::string& expected = s["childId"] == "before" ? before : text;
    if (s["truncated"] == true) {
      CHECK(read_file(s["artifact"]["path"].get<std::string>()) == expected);
    } else {
      CHECK(s["text"] == expected);
    }
  }
  // Once: the resend now is a duplicate of a delivered result.
  const json again = complete(after, "in-flight", text);
  REQUIRE(again.contains("result"));
  CHECK(again["result"]["duplicate"] == true);
}

// The window a wait's answer opens (docs/design.md §7): the artifacts it names are written and
// linked before the answer and synced after it, and only then do its results leave the queue.
// A kill there (strace delivers SIGKILL as the daemon enters fsync on the artifact, which only
// that sync does: the write before the link syncs a file with no name) comes after the answer:
// the artifact the answer named is whole after the restart, and the result, never consumed, is
// delivered again. A power loss in the window may also leave the artifact cut short: the test
// then cuts it as ext4 may, and the restart mends it from the queue's copy before serving.
TEST_CASE("killed between a wait's answer and its artifact's sync: the artifact the answer named is whole after the restart") {
  sandbox box;
  handoffd_at d(box.dirs());
  raw_client c(d.socket());
  const std::string text = numbered_report(40000, 600, "window");  // cut by the 16 KiB wait cap; inline in the journal
  const fs::path artifact = box.artifacts / (handoff::sha256_hex(text) + ".txt");
  REQUIRE(complete(c, "window", text).contains("result"));

  syscall_fault kill_at_sync(d.pid(), artifact, "fsync", "signal=KILL", box.run / "strace.log");
  if (!kill_at_sync.attached()) {
    cannot_inject("cannot kill at fsync here: " + kill_at_sync.why_not());
    return;
  }
  const json r = c.call("subagent/wait", {{"parentId", "p"}, {"childIds", {"window"}}, {"timeoutMs", 20000}});
  REQUIRE_MESSAGE(r.contains("result"), r.dump());  // answered before the sync
  REQUIRE(r["result"]["sections"].size() == 1);
  const json section = r["result"]["sections"][0];
  REQUIRE(section["truncated"] == true);
  REQUIRE(section["artifact"]["saved"] == true);
  CHECK(section["artifact"]["path"] == artifact.string());
  CHECK(section["text"].get<std::string>().find(artifact.string()) != std::string::npos);
  REQUIRE_MESSAGE(eventually([&] { return !d.alive(); }, std::chrono::seconds(20)), "the daemon never synced the artifact");
  kill_at_sync.end();
  d.kill_hard();
  CHECK(read_file(artifact) == text);

  SUBCASE("a kill of the daemon: the artifact was whole already, and is delivered again") {
    d.start();
  }
  SUBCASE("a power loss that cut the unsynced artifact short: the restart mends it") {
    fs::resize_file(artifact, 0);
    d.start();
    CHECK(read_file(artifact) == text);  // before anything asked for it: recovery did it
    CHECK(mode_of(artifact) == 0600);
    const std::string log = d.log();
    CHECK_MESSAGE(log.find("artifact repair: " + artifact.string()) != std::string::npos, log);
  }
  // Never consumed: still queued, delivered again, naming the same artifact.
  raw_client after(d.socket());
  const json again = after.call("subagent/wait", {{"parentId", "p"}, {"childIds", {"window"}}, {"timeoutMs", 20000}});
  REQUIRE_MESSAGE(again.contains("result"), again.dump());
  REQUIRE(again["result"]["sections"].size() == 1);
  CHECK(again["result"]["sections"][0]["artifact"]["path"] == artifact.string());
  CHECK(read_file(artifact) == text);
  CHECK(names_in(box.artifacts) == std::vector<std::string>{artifact.filename().string()});
  // This time it was synced and consumed: the queue empties.
  CHECK(eventually([&] { return after.call("daemon/status", nullptr)["result"]["queue"]["results"] == 0; }));
}

TEST_CASE("a full queue answers -32005 and acknowledges nothing until space returns") {
  check_queue_fault(fault_kind::no_space, "texts");
}

TEST_CASE("a read-only queue answers -32005 and acknowledges nothing until it is writable") {
  check_queue_fault(fault_kind::read_only, "texts");
}

TEST_CASE("a journal append refused with EACCES removes the stored text and acknowledges nothing") {
  check_queue_fault(fault_kind::no_permission, "journal");
}
