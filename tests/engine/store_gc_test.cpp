// Store GC (engine/store/store_gc.hpp) on real files whose mtimes are set with utimensat: what goes by
// age, by size oldest first, what is protected, temps, strangers, and a plan gone stale.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include "engine/fs/posix_io.hpp"
#include "engine/fs/sha256.hpp"
#include "engine/store/store_gc.hpp"
#include "support/fs_fixtures.hpp"

namespace fs = std::filesystem;
using namespace handoff;
using namespace handoff::test;
using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;
using std::chrono::system_clock;

namespace {

// A fixed "now", so ages are exact whatever the clock says.
const system_clock::time_point now = system_clock::time_point(seconds(1'800'000'000));

class store {
 public:
  store() : fd_(::open(dir_.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) { REQUIRE(fd_); }
  int fd() const { return fd_.get(); }
  fs::path path(const std::string& name) const { return dir_ / name; }

  // Writes an artifact of `bytes` bytes (content made unique by `tag`) aged `age`; returns its sha256.
  std::string artifact(const std::string& tag, std::size_t bytes, seconds age) {
    std::string text = tag + ":";
    text.resize(bytes, 'x');
    const std::string sha = sha256_hex(text);
    file(sha + ".txt", text, age);
    return sha;
  }
  void file(const std::string& name, const std::string& content, seconds age) {
    write_file(path(name), content, 0600);
    age_file(name, age);
  }
  void age_file(const std::string& name, seconds age) {
    const auto t = now - age;
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
    const timespec times[2] = {{ns / 1'000'000'000, ns % 1'000'000'000}, {ns / 1'000'000'000, ns % 1'000'000'000}};
    REQUIRE(::utimensat(AT_FDCWD, path(name).c_str(), times, AT_SYMLINK_NOFOLLOW) == 0);
  }
  bool has(const std::string& name) const { return fs::exists(fs::symlink_status(path(name))); }

 private:
  temp_dir dir_{"store-gc"};
  unique_fd fd_;
};

std::vector<std::string> names(const std::vector<gc_entry>& entries) {
  std::vector<std::string> out;
  for (const auto& e : entries) out.push_back(e.name);
  return out;
}

gc_limits limits(seconds max_age, std::uint64_t max_bytes) {
  gc_limits l;
  l.max_age = max_age;
  l.max_bytes = max_bytes;
  return l;
}

}  // namespace

TEST_CASE("artifacts older than max_age go, younger ones and protected old ones stay") {
  store s;
  const auto old_a = s.artifact("a", 100, hours(24 * 8));
  const auto old_protected = s.artifact("b", 100, hours(24 * 30));
  const auto young = s.artifact("c", 100, hours(24 * 6));
  const gc_plan plan = plan_gc(s.fd(), now, limits(hours(24 * 7), 1 << 30), {old_protected});

  CHECK(names(plan.remove) == std::vector<std::string>{old_a + ".txt"});
  CHECK(plan.remove[0].reason == gc_reason::age);
  CHECK(plan.remove[0].sha256 == old_a);
  CHECK(plan.remove[0].bytes == 100);
  CHECK(plan.kept_files == 2);
  CHECK(plan.kept_bytes == 200);
  CHECK(plan.protected_files == 1);
  CHECK(plan.protected_bytes == 100);
  CHECK_FALSE(plan.over_quota);
  // Planning removes nothing (this is what a dry run shows).
  CHECK(s.has(old_a + ".txt"));

  const gc_outcome out = apply_gc(s.fd(), plan);
  CHECK(names(out.removed) == names(plan.remove));
  CHECK(out.skipped == 0);
  CHECK(out.problems.empty());
  CHECK_FALSE(s.has(old_a + ".txt"));
  CHECK(s.has(old_protected + ".txt"));
  CHECK(s.has(young + ".txt"));
  CHECK(measure_store(s.fd()).files == 2);
  CHECK(measure_store(s.fd()).bytes == 200);
}

TEST_CASE("over the byte quota, the oldest unprotected artifacts go until it fits") {
  store s;
  // Five 1000-byte artifacts, ages 5h (oldest) .. 1h; the oldest is protected.
  std::vector<std::string> sha;
  for (int i = 0; i < 5; ++i) sha.push_back(s.artifact("n" + std::to_string(i), 1000, hours(5 - i)));
  const gc_plan plan = plan_gc(s.fd(), now, limits(hours(24 * 7), 2500), {sha[0]});

  // 5000 bytes, 2500 allowed: the protected oldest stays, so the next two oldest go (3000 left,
  // still over) and then the third (2000).
  CHECK(names(plan.remove) == std::vector<std::string>{sha[1] + ".txt", sha[2] + ".txt", sha[3] + ".txt"});
  for (const auto& e : plan.remove) CHECK(e.reason == gc_reason::size);
  CHECK(plan.kept_bytes == 2000);
  CHECK(plan.kept_files == 2);
  CHECK_FALSE(plan.over_quota);
  apply_gc(s.fd(), plan);
  CHECK(s.has(sha[0] + ".txt"));
  CHECK(s.has(sha[4] + ".txt"));
  CHECK(measure_store(s.fd()).bytes == 2000);
}

TEST_CASE("protected artifacts are kept even when they alone exceed the quota") {
  store s;
  const auto a = s.artifact("a", 3000, hours(24 * 100));
  const auto b = s.artifact("b", 3000, hours(1));
  const gc_plan plan = plan_gc(s.fd(), now, limits(hours(24), 1000), {a, b});
  CHECK(plan.remove.empty());
  CHECK(plan.over_quota);
  CHECK(plan.kept_bytes == 6000);
}

TEST_CASE("mtime ties are broken by name, so the plan is deterministic") {
  store s;
  const auto x = s.artifact("x", 1000, hours(2));
  const auto y = s.artifact("y", 1000, hours(2));
  const gc_plan plan = plan_gc(s.fd(), now, limits(hours(24), 1000), {});
  REQUIRE(plan.remove.size() == 1);
  CHECK(plan.remove[0].name == std::min(x, y) + ".txt");
}

TEST_CASE("temp files older than the grace period go, a save in progress and strangers stay") {
  store s;
  s.file(".tmp-0123456789abcdef", "crashed save", minutes(5));
  s.file(".tmp-fedcba9876543210", "save in progress", seconds(10));
  s.file("notes.md", "not ours to judge", hours(24 * 365));
  s.file(std::string(64, 'A') + ".txt", "uppercase hex is not an artifact name", hours(24 * 365));
  REQUIRE(::symlink("/etc/passwd", s.path(std::string(64, 'e') + ".txt").c_str()) == 0);
  const auto sha = s.artifact("kept", 10, hours(1));

  const gc_plan plan = plan_gc(s.fd(), now, gc_limits{}, {});
  CHECK(names(plan.remove) == std::vector<std::string>{".tmp-0123456789abcdef"});
  CHECK(plan.remove[0].reason == gc_reason::temp);
  CHECK(plan.remove[0].sha256.empty());
  CHECK(plan.ignored == 3);
  CHECK(plan.kept_files == 1);
  apply_gc(s.fd(), plan);
  CHECK_FALSE(s.has(".tmp-0123456789abcdef"));
  CHECK(s.has(".tmp-fedcba9876543210"));
  CHECK(s.has("notes.md"));
  CHECK(s.has(std::string(64, 'e') + ".txt"));  // the symlink itself, untouched
  CHECK(fs::exists("/etc/passwd"));
  CHECK(s.has(sha + ".txt"));
}

TEST_CASE("temps_only limits sweep stale temps and never an artifact") {
  store s;
  s.file(".tmp-00000000000000aa", "crashed", hours(1));
  const auto ancient = s.artifact("ancient", 1 << 20, hours(24 * 3650));
  const gc_plan plan = plan_gc(s.fd(), now, gc_limits::temps_only(), {});
  CHECK(names(plan.remove) == std::vector<std::string>{".tmp-00000000000000aa"});
  CHECK(plan.kept_files == 1);
  apply_gc(s.fd(), plan);
  CHECK(s.has(ancient + ".txt"));
}

TEST_CASE("apply removes only the very file planned, and asks about references again") {
  store s;
  const auto replaced = s.artifact("r", 100, hours(24 * 30));
  const auto touched = s.artifact("t", 100, hours(24 * 30));
  const auto referenced = s.artifact("f", 100, hours(24 * 30));
  const auto vanished = s.artifact("v", 100, hours(24 * 30));
  const auto plain = s.artifact("p", 100, hours(24 * 30));
  const gc_plan plan = plan_gc(s.fd(), now, limits(hours(24), 1 << 30), {});
  REQUIRE(plan.remove.size() == 5);

  // Between plan and apply: one name now holds another file, one was written again (new
  // mtime), one vanished, and one became referenced.
  fs::remove(s.path(replaced + ".txt"));
  s.file(replaced + ".txt", std::string(100, 'z'), hours(24 * 30));
  s.age_file(touched + ".txt", hours(1));
  fs::remove(s.path(vanished + ".txt"));
  std::vector<std::string> asked;
  const gc_outcome out = apply_gc(s.fd(), plan, [&](std::string_view sha) {
    asked.emplace_back(sha);
    return sha == referenced;
  });

  CHECK(names(out.removed) == std::vector<std::string>{plain + ".txt"});
  CHECK(out.skipped == 4);
  CHECK(out.problems.empty());
  CHECK(s.has(replaced + ".txt"));
  CHECK(s.has(touched + ".txt"));
  CHECK(s.has(referenced + ".txt"));
  // Only files that were still the planned ones were asked about.
  CHECK(asked.size() == 2);
}

TEST_CASE("a store on a filesystem gone read-only reports each failed removal and keeps going") {
  temp_dir dir("store-gc-rofs");
  tmpfs_mount fs_mount(dir.path(), "size=1m");
  if (!fs_mount.mounted()) {
    MESSAGE("skipped: cannot mount a tmpfs here (" << fs_mount.why_not() << ")");
    return;
  }
  std::vector<std::string> planted;
  for (const char* tag : {"a", "b"}) {
    std::string text = std::string(tag) + ":old";
    const std::string name = sha256_hex(text) + ".txt";
    write_file(dir / name, text, 0600);
    const timespec old[2] = {{1'000'000'000, 0}, {1'000'000'000, 0}};
    REQUIRE(::utimensat(AT_FDCWD, (dir / name).c_str(), old, 0) == 0);
    planted.push_back(name);
  }
  unique_fd fd(::open(dir.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  REQUIRE(fd);
  const gc_plan plan = plan_gc(fd.get(), now, limits(hours(24), 1 << 30), {});
  REQUIRE(plan.remove.size() == 2);
  REQUIRE(fs_mount.remount_read_only());
  const gc_outcome out = apply_gc(fd.get(), plan);
  CHECK(out.removed.empty());
  REQUIRE(out.problems.size() == 2);
  CHECK(out.problems[0].find("Read-only file system") != std::string::npos);
  for (const auto& name : planted) CHECK(fs::exists(dir / name));
}
