// The publishing and checking helpers under the artifact store and the queue, including the
// named-temp path that O_TMPFILE filesystems never take.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "engine/fs/atomic_file.hpp"
#include "engine/fs/posix_io.hpp"
#include "engine/fs/private_dir.hpp"
#include "support/fs_fixtures.hpp"

namespace fs = std::filesystem;
using namespace handoff;
using namespace handoff::test;

namespace {

unique_fd open_dir(const fs::path& p) {
  unique_fd fd(::open(p.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  REQUIRE(fd);
  return fd;
}

}  // namespace

TEST_CASE("write_file_atomically publishes a complete 0600 file, by either temp method") {
  umask_guard guard(0);
  for (const auto method : {temp_method::automatic, temp_method::named}) {
    INFO("named temp: ", method == temp_method::named);
    temp_dir tmp;
    const unique_fd dir = open_dir(tmp.path());
    CHECK(write_file_atomically(dir.get(), "a.txt", "first", publish_mode::no_replace, "a",
                                method));
    CHECK(read_file(tmp.path() / "a.txt") == "first");
    CHECK(mode_of(tmp.path() / "a.txt") == 0600);

    // no_replace: the existing file wins, nothing is written, no temp is left.
    CHECK_FALSE(write_file_atomically(dir.get(), "a.txt", "second", publish_mode::no_replace,
                                      "a", method));
    CHECK(read_file(tmp.path() / "a.txt") == "first");

    // replace: the new content takes the name in one step.
    CHECK(write_file_atomically(dir.get(), "a.txt", "third", publish_mode::replace, "a", method));
    CHECK(read_file(tmp.path() / "a.txt") == "third");
    CHECK(mode_of(tmp.path() / "a.txt") == 0600);
    CHECK(names_in(tmp.path()) == std::vector<std::string>{"a.txt"});
  }
}

TEST_CASE("no_replace never writes through a symlink at the name") {
  temp_dir tmp;
  fs::create_directory(tmp.path() / "d");
  const unique_fd dir = open_dir(tmp.path() / "d");
  const fs::path target = tmp.path() / "target";
  fs::create_symlink(target, tmp.path() / "d" / "x");
  for (const auto method : {temp_method::automatic, temp_method::named}) {
    CHECK_FALSE(write_file_atomically(dir.get(), "x", "bytes", publish_mode::no_replace, "x",
                                      method));
  }
  CHECK_FALSE(fs::exists(fs::symlink_status(target)));
  CHECK(names_in(tmp.path() / "d") == std::vector<std::string>{"x"});
}

TEST_CASE("a failed write throws fs_error with the reason and leaves no temp file") {
  temp_dir tmp;
  const fs::path mount_point = tmp.path() / "small";
  fs::create_directory(mount_point);
  tmpfs_mount small(mount_point, "size=64k");
  if (!small.mounted()) {
    MESSAGE("skipped: cannot mount a tmpfs here (", small.why_not(), ")");
    return;
  }
  const unique_fd dir = open_dir(mount_point);
  const std::string big(512 * 1024, 'x');
  for (const auto mode : {publish_mode::no_replace, publish_mode::replace}) {
    for (const auto method : {temp_method::automatic, temp_method::named}) {
      try {
        write_file_atomically(dir.get(), "big", big, mode, "the record", method);
        FAIL_CHECK("a 512 KiB write fit in a 64 KiB tmpfs");
      } catch (const fs_error& e) {
        CHECK(e.code() == ENOSPC);
        CHECK(std::string(e.what()) == "No space left on device while writing the record");
      }
      CHECK(names_in(mount_point).empty());
    }
  }
}

TEST_CASE("list_names lists every entry but . and ..") {
  temp_dir tmp;
  write_file(tmp.path() / "one", "1", 0600);
  fs::create_directory(tmp.path() / "two");
  const unique_fd dir = open_dir(tmp.path());
  auto names = list_names(dir.get());
  std::sort(names.begin(), names.end());
  CHECK(names == std::vector<std::string>{"one", "two"});
  CHECK(list_names(dir.get()).size() == 2);  // a second listing starts from the top again
}

TEST_CASE("open_private_file trusts only regular files of ours closed to others") {
  temp_dir tmp;
  const unique_fd dir = open_dir(tmp.path());
  const auto state_of = [&](const char* name) { return open_private_file(dir.get(), name, name); };

  CHECK(state_of("absent").state == private_file::status::absent);
  write_file(tmp.path() / "good", "g", 0600);
  const private_file good = state_of("good");
  CHECK(good.state == private_file::status::ok);
  CHECK(good.fd);
  CHECK(good.st.st_size == 1);

  write_file(tmp.path() / "open", "o", 0640);
  fs::create_symlink(tmp.path() / "good", tmp.path() / "link");
  REQUIRE(::mkfifo((tmp.path() / "fifo").c_str(), 0600) == 0);
  fs::create_directory(tmp.path() / "dir");
  write_file(tmp.path() / "foreign", "f", 0600);
  REQUIRE(::chown((tmp.path() / "foreign").c_str(), 12345, 12345) == 0);
  const std::vector<std::pair<const char*, const char*>> refused = {
      {"open", "mode 0640"}, {"link", "a symlink is at link"}, {"fifo", "a FIFO is at fifo"},
      {"dir", "a directory is at dir"}, {"foreign", "owned by uid 12345"}};
  for (const auto& entry : refused) {
    INFO(entry.first);
    const private_file f = state_of(entry.first);
    CHECK(f.state == private_file::status::refused);
    CHECK_FALSE(f.fd);
    CHECK(f.reason.find(entry.second) != std::string::npos);
  }
}

TEST_CASE("open_private_dir walks existing symlinked ancestors but never a symlinked target") {
  temp_dir tmp;
  fs::create_directory(tmp.path() / "real");
  fs::create_directory_symlink(tmp.path() / "real", tmp.path() / "alias");

  // ~/.pi -> /data/pi is a user's choice: an existing ancestor may be a symlink.
  const unique_fd fd = open_private_dir(tmp.path() / "alias" / "a" / "store", "test dir");
  CHECK(fd);
  CHECK(fs::is_directory(fs::symlink_status(tmp.path() / "real" / "a" / "store")));
  CHECK(mode_of(tmp.path() / "real" / "a" / "store") == 0700);

  // The directory itself must not be one.
  CHECK_THROWS_WITH_AS(open_private_dir(tmp.path() / "alias", "test dir"),
                       doctest::Contains("is a symlink"), std::runtime_error);
  CHECK_THROWS_WITH_AS(open_private_dir("/", "test dir"), doctest::Contains("root"),
                       std::runtime_error);
}

TEST_CASE("open_existing_private_dir creates nothing and holds what exists to the same rules") {
  temp_dir tmp;
  // Missing at the end, or further up: no fd, and nothing made on the way.
  CHECK_FALSE(open_existing_private_dir(tmp.path() / "cache" / "openpi" / "subagent-results", "test dir"));
  CHECK_FALSE(fs::exists(tmp.path() / "cache"));
  fs::create_directories(tmp.path() / "cache" / "openpi");
  CHECK_FALSE(open_existing_private_dir(tmp.path() / "cache" / "openpi" / "subagent-results", "test dir"));
  CHECK_FALSE(fs::exists(tmp.path() / "cache" / "openpi" / "subagent-results"));

  const fs::path dir = tmp.path() / "cache" / "openpi" / "subagent-results";
  fs::create_directory(dir);
  fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace);
  const unique_fd fd = open_existing_private_dir(dir, "test dir");
  REQUIRE(fd);
  struct stat st {};
  REQUIRE(::fstat(fd.get(), &st) == 0);
  CHECK(st.st_ino == lstat_of(dir).st_ino);

  // Open to others, or a symlink at its name: refused, as open_private_dir refuses them.
  fs::permissions(dir, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec,
                  fs::perm_options::replace);
  CHECK_THROWS_WITH_AS(open_existing_private_dir(dir, "test dir"), doctest::Contains("0700"), std::runtime_error);
  fs::create_directory(tmp.path() / "elsewhere");
  fs::permissions(tmp.path() / "elsewhere", fs::perms::owner_all, fs::perm_options::replace);
  fs::create_directory_symlink(tmp.path() / "elsewhere", tmp.path() / "link");
  CHECK_THROWS_WITH_AS(open_existing_private_dir(tmp.path() / "link", "test dir"), doctest::Contains("is a symlink"),
                       std::runtime_error);
  // A dangling symlink at an ancestor's name is not "missing": it is refused too, never made.
  fs::create_directory_symlink(tmp.path() / "gone", tmp.path() / "dangling");
  CHECK_THROWS_AS(open_existing_private_dir(tmp.path() / "dangling" / "store", "test dir"), std::runtime_error);
  CHECK_FALSE(fs::exists(tmp.path() / "gone"));
}
