// The queue's tombstones (engine/queue/queue_tombstones.hpp) on a real directory: what left the
// queue is recognised while its done/ file is being written, after it is written, when the disk
// refused it, and no longer once expired.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "engine/fs/private_dir.hpp"
#include "engine/queue/queue_disk.hpp"
#include "engine/queue/queue_files.hpp"
#include "engine/queue/queue_tombstones.hpp"
#include "support/fs_fixtures.hpp"

namespace fs = std::filesystem;
using namespace handoff;
using namespace handoff::test;

namespace {

// A queue directory with its done/ area, as the queue opens it.
struct tombstone_area {
  temp_dir tmp{"handoff-tombstones"};
  fs::path dir = tmp / "queue";
  unique_fd dir_fd = [this] {
    fs::create_directory(dir);
    fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace);
    return open_private_dir(dir, "queue dir");
  }();
  queue_tombstones t{dir_fd.get(), dir};
};

std::string key_for(const std::string& child) { return completion_key("p", child); }

std::vector<std::string> sorted_texts(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

}  // namespace

TEST_CASE("queue_tombstones: a retired result is recognised before, while and after its file is written") {
  tombstone_area a;
  const std::string k = key_for("c1");
  const tombstone t{std::string(64, 'a'), 7, unix_ms_now()};
  CHECK_FALSE(a.t.find(k).has_value());

  a.t.retiring(k, t);
  REQUIRE(a.t.find(k).has_value());
  CHECK(a.t.find(k)->seq == 7);
  CHECK(a.t.count() == 1);
  CHECK(a.t.recent_text(t.sha256));
  std::vector<std::string> texts;
  a.t.append_recent_texts(texts);
  CHECK(texts == std::vector<std::string>{t.sha256});
  CHECK_FALSE(fs::exists(a.dir / "done" / k));

  std::vector<queue_tombstones::keyed> refused;
  const std::vector<queue_tombstones::keyed> retired{{k, t}};
  const std::size_t written = a.t.write_files(retired, refused, nullptr);
  CHECK(written == 1);
  CHECK(refused.empty());
  a.t.filed(retired, written, refused);
  CHECK(a.t.count() == 1);            // the file now, no longer memory
  CHECK_FALSE(a.t.recent_text(t.sha256));
  CHECK(a.t.has_file(k));
  CHECK_FALSE(a.t.lacks_file(k));
  CHECK(mode_of(a.dir / "done" / k) == 0600);
  REQUIRE(a.t.find(k).has_value());  // read back from done/
  CHECK(a.t.find(k)->sha256 == t.sha256);
  CHECK(a.t.find(k)->seq == 7);
  a.t.sync_files();
}

TEST_CASE("queue_tombstones: a file the disk refuses stays in memory until it is written again") {
  tombstone_area a;
  const std::string ok = key_for("ok");
  const std::string blocked = key_for("blocked");
  fs::create_directory(a.dir / "done" / blocked);  // a directory where its file would go: refused
  const std::vector<queue_tombstones::keyed> retired{{ok, {std::string(64, 'b'), 1, 10}},
                                                     {blocked, {std::string(64, 'c'), 2, 20}}};
  for (const auto& [key, t] : retired) a.t.retiring(key, t);

  std::vector<queue_tombstones::keyed> refused;
  std::vector<std::string> why;
  const std::size_t written = a.t.write_files(retired, refused, &why);
  CHECK(written == 1);
  REQUIRE(refused.size() == 1);
  CHECK(refused[0].first == blocked);
  CHECK(why.size() == 1);
  a.t.filed(retired, written, refused);
  CHECK_FALSE(a.t.all_filed());
  CHECK(a.t.count() == 2);
  REQUIRE(a.t.find(blocked).has_value());  // from memory: its file is not there
  CHECK(a.t.find(blocked)->seq == 2);
  const std::vector<queue_tombstones::keyed> unfiled = a.t.unfiled();
  REQUIRE(unfiled.size() == 1);
  CHECK(unfiled[0].first == blocked);
  CHECK(unfiled[0].second.seq == 2);

  // Still refused: still unfiled.
  std::vector<queue_tombstones::keyed> again = a.t.unfiled();
  refused.clear();
  std::size_t refiled = a.t.write_files(again, refused, nullptr);
  CHECK_FALSE(a.t.refiled(again, refiled, refused));

  fs::remove(a.dir / "done" / blocked);
  refused.clear();
  refiled = a.t.write_files(again, refused, nullptr);
  CHECK(refiled == 1);
  CHECK(a.t.refiled(again, refiled, refused));
  CHECK(a.t.all_filed());
  CHECK(a.t.count() == 2);
  CHECK(a.t.has_file(blocked));
}

TEST_CASE("queue_tombstones: a refused retirement stays recognised until it expires, and so do files") {
  tombstone_area a;
  const std::int64_t now = unix_ms_now();
  const std::string unwritten = key_for("unwritten");
  a.t.retiring(unwritten, {std::string(64, 'd'), 3, now - 10'000});
  a.t.retire_refused(unwritten, {std::string(64, 'd'), 3, now - 10'000});
  CHECK(a.t.count() == 1);
  CHECK_FALSE(a.t.recent_text(std::string(64, 'd')));  // not leaving: still in the journal
  CHECK(a.t.find(unwritten).has_value());

  const std::string old_file = key_for("old");
  const std::string young_file = key_for("young");
  std::vector<queue_tombstones::keyed> refused;
  const std::vector<queue_tombstones::keyed> files{{old_file, {std::string(64, 'e'), 4, now - 10'000}},
                                                   {young_file, {std::string(64, 'f'), 5, now}}};
  a.t.filed(files, a.t.write_files(files, refused, nullptr), refused);
  CHECK(a.t.count() == 3);

  std::vector<std::string> problems;
  CHECK(sorted_texts(a.t.delivered_texts(now - 20'000, problems)) ==
        std::vector<std::string>{std::string(64, 'e'), std::string(64, 'f')});
  CHECK(a.t.delivered_texts(now, problems) == std::vector<std::string>{std::string(64, 'f')});
  CHECK(problems.empty());

  const std::int64_t cutoff = now - 5'000;
  CHECK(a.t.expire_unwritten(cutoff) == 1);
  const std::size_t removed = a.t.remove_files_up_to(cutoff);
  CHECK(removed == 1);
  a.t.expired(cutoff, removed);
  CHECK(a.t.count() == 1);
  CHECK_FALSE(a.t.find(unwritten).has_value());
  CHECK_FALSE(a.t.find(old_file).has_value());
  CHECK(a.t.find(young_file).has_value());
  CHECK(a.t.load_expiry() == cutoff);  // recorded for recovery
}

TEST_CASE("queue_tombstones: recovery counts done/, removes temp files, leaves strangers, writes what the journal has") {
  tombstone_area a;
  const std::string k = key_for("kept");
  std::vector<queue_tombstones::keyed> refused;
  const std::vector<queue_tombstones::keyed> before{{k, {std::string(64, 'a'), 1, 5}}};
  CHECK(a.t.write_files(before, refused, nullptr) == 1);
  write_file(a.dir / "done" / ".tmp-crashed", "half", 0600);
  write_file(a.dir / "done" / "stranger", "x", 0600);

  queue_tombstones again{a.dir_fd.get(), a.dir};
  std::vector<std::string> notes;
  again.count_files(notes);
  CHECK(again.count() == 1);
  CHECK_FALSE(fs::exists(a.dir / "done" / ".tmp-crashed"));
  CHECK(fs::exists(a.dir / "done" / "stranger"));
  CHECK(notes.size() == 2);

  const std::string missing = key_for("missing");
  CHECK(again.lacks_file(missing));
  again.refile_from_journal({{missing, {std::string(64, 'b'), 2, 6}}}, notes);
  CHECK(again.count() == 2);
  CHECK(again.has_file(missing));
  CHECK(notes.size() == 2);  // nothing refused
}
