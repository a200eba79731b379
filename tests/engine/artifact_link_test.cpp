// The artifact store's link path (artifact_store::save with a text_file): the queue's file is
// hard-linked into the store when it can be, and copied whenever it cannot or must not be.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "engine/store/artifact_store.hpp"
#include "engine/fs/atomic_file.hpp"
#include "engine/fs/posix_io.hpp"
#include "engine/fs/sha256.hpp"
#include "support/fs_fixtures.hpp"

namespace fs = std::filesystem;
using handoff::artifact_ref;
using handoff::artifact_store;
using handoff::sha256_hex;
using handoff::text_file;
using handoff::unique_fd;
using namespace handoff::test;

namespace {

bool same_inode(const fs::path& a, const fs::path& b) {
  const struct stat x = lstat_of(a);
  const struct stat y = lstat_of(b);
  return x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

// A queue-like texts directory holding `text` as <sha256>.txt, written as the queue writes it.
struct source_dir {
  fs::path path;
  unique_fd fd;
  std::string text, sha, name;

  source_dir(const fs::path& at, std::string t) : path(at), text(std::move(t)), sha(sha256_hex(text)), name(sha + ".txt") {
    fs::create_directories(path);
    fs::permissions(path, fs::perms::owner_all, fs::perm_options::replace);
    fd.reset(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    REQUIRE(fd);
    REQUIRE(handoff::write_file_atomically(fd.get(), name, text, handoff::publish_mode::no_replace, "a text"));
  }
  text_file file() const { return text_file{fd.get(), name}; }
  fs::path file_path() const { return path / name; }
};

std::string report(std::size_t bytes) {
  std::string s;
  for (int i = 0; s.size() < bytes; ++i) s += "line " + std::to_string(i) + ": linked, not copied\n";
  s.resize(bytes);
  return s;
}

}  // namespace

TEST_CASE("an offered source on the same filesystem is hard-linked: the artifact is the very inode") {
  temp_dir tmp;
  source_dir src(tmp / "queue-texts", report(300 * 1024));
  artifact_store store(tmp.path() / "store");

  const artifact_ref ref = store.save(src.text, src.sha, src.file());
  REQUIRE_MESSAGE(ref.saved, ref.error);
  CHECK(ref.link_error.empty());
  CHECK(ref.path == (tmp.path() / "store" / src.name).string());
  CHECK(same_inode(ref.path, src.file_path()));
  const struct stat st = lstat_of(ref.path);
  CHECK(st.st_nlink == 2);
  CHECK((st.st_mode & 07777) == 0600);
  CHECK(read_file(ref.path) == src.text);

  // The queue removes its name once the result is consumed: the artifact stays whole.
  fs::remove(src.file_path());
  CHECK(lstat_of(ref.path).st_nlink == 1);
  CHECK(read_file(ref.path) == src.text);
  // Saving the same text again reuses the artifact (verified), linking nothing.
  const artifact_ref again = store.save(src.text, src.sha, src.file());
  CHECK(again.saved);
  CHECK(again.link_error.empty());
}

TEST_CASE("a link makes the artifact's age start now: the store's age limit counts from the save") {
  temp_dir tmp;
  source_dir src(tmp / "queue-texts", report(4096));
  const struct timespec old_times[2] = {{1'000'000, 0}, {1'000'000, 0}};  // 1970: a text queued long ago
  REQUIRE(::utimensat(src.fd.get(), src.name.c_str(), old_times, 0) == 0);
  artifact_store store(tmp.path() / "store");
  const artifact_ref ref = store.save(src.text, src.sha, src.file());
  REQUIRE(ref.saved);
  CHECK(same_inode(ref.path, src.file_path()));
  CHECK(lstat_of(ref.path).st_mtim.tv_sec > 1'000'000'000);
}

TEST_CASE("a source the store must not trust is copied, and link_error says why") {
  temp_dir tmp;
  const std::string text = report(64 * 1024);
  const std::string sha = sha256_hex(text);
  const std::string name = sha + ".txt";
  const fs::path dir = tmp / "texts";
  fs::create_directories(dir);
  fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace);
  const unique_fd dir_fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  REQUIRE(dir_fd);

  auto copied = [&](const std::string& expected_reason) {
    temp_dir store_dir("link-store");
    artifact_store store(store_dir.path() / "store");
    const artifact_ref ref = store.save(text, sha, text_file{dir_fd.get(), name});
    REQUIRE_MESSAGE(ref.saved, ref.error);
    INFO("link_error: ", ref.link_error);
    CHECK(ref.link_error.find(expected_reason) != std::string::npos);
    CHECK(lstat_of(ref.path).st_nlink == 1);
    CHECK((lstat_of(ref.path).st_mode & 07777) == 0600);
    CHECK(read_file(ref.path) == text);
  };

  SUBCASE("absent") { copied("is gone"); }
  SUBCASE("a symlink to the very text: never followed") {
    write_file(tmp / "elsewhere.txt", text, 0600);
    fs::create_symlink(tmp / "elsewhere.txt", dir / name);
    copied("symlink");
  }
  SUBCASE("open to others") {
    write_file(dir / name, text, 0604);
    copied("refusing to trust it");
  }
  SUBCASE("read-only 0400: an artifact must be 0600") {
    write_file(dir / name, text, 0400);
    copied("not 0600");
  }
  SUBCASE("another size than the text") {
    write_file(dir / name, text + "tail", 0600);
    copied("bytes, the text");
  }
}

TEST_CASE("a store on another filesystem than the source gets a copy (EXDEV)") {
  temp_dir tmp;
  source_dir src(tmp / "queue-texts", report(200 * 1024));
  // /dev/shm is a tmpfs; the temporary directory is on the disk (or this test says so).
  const fs::path shm = "/dev/shm";
  REQUIRE_MESSAGE(fs::is_directory(shm), "no /dev/shm on this machine");
  if (lstat_of(shm).st_dev == lstat_of(tmp.path()).st_dev) {
    MESSAGE("skipped: the temporary directory is on /dev/shm's filesystem");
    return;
  }
  const fs::path store_path = shm / ("handoff-link-test-" + std::to_string(::getpid()));
  struct cleanup {
    fs::path p;
    ~cleanup() { fs::remove_all(p); }
  } remove_store{store_path};
  artifact_store store(store_path);

  const artifact_ref ref = store.save(src.text, src.sha, src.file());
  REQUIRE_MESSAGE(ref.saved, ref.error);
  INFO("link_error: ", ref.link_error);
  CHECK(ref.link_error.find("Invalid cross-device link") != std::string::npos);
  CHECK_FALSE(same_inode(ref.path, src.file_path()));
  CHECK(lstat_of(src.file_path()).st_nlink == 1);
  CHECK((lstat_of(ref.path).st_mode & 07777) == 0600);
  CHECK(read_file(ref.path) == src.text);
}

TEST_CASE("a name already taken in the store is verified, never replaced by the link") {
  temp_dir tmp;
  source_dir src(tmp / "queue-texts", report(8192));
  artifact_store store(tmp.path() / "store");
  SUBCASE("the same text, written before: reused") {
    REQUIRE(store.save(src.text).saved);
    const artifact_ref ref = store.save(src.text, src.sha, src.file());
    CHECK(ref.saved);
    CHECK_FALSE(same_inode(ref.path, src.file_path()));
  }
  SUBCASE("other bytes under the name: refused and left alone") {
    write_file(tmp.path() / "store" / src.name, "not the text", 0600);
    const artifact_ref ref = store.save(src.text, src.sha, src.file());
    CHECK_FALSE(ref.saved);
    CHECK(ref.error.find("different file") != std::string::npos);
    CHECK(read_file(tmp.path() / "store" / src.name) == "not the text");
  }
}

TEST_CASE("a text written with no name while it was hashed is linked into the store: no copy, nothing left behind") {
  umask_guard guard(0);
  temp_dir tmp;
  artifact_store store(tmp.path() / "store");
  const std::string text = report(1024 * 1024);

  std::optional<unique_fd> unnamed = store.write_unnamed(text);
  REQUIRE(unnamed);
  CHECK(names_in(tmp.path() / "store").empty());  // written and synced, but under no name yet
  struct stat before {};
  REQUIRE(::fstat(unnamed->get(), &before) == 0);
  CHECK((before.st_mode & 07777) == 0600);
  CHECK(static_cast<std::size_t>(before.st_size) == text.size());

  const artifact_ref ref = store.save(text, sha256_hex(text), text_file{-1, {}, unnamed->get()});
  REQUIRE_MESSAGE(ref.saved, ref.error);
  CHECK(ref.link_error.empty());
  const struct stat linked = lstat_of(ref.path);
  CHECK(linked.st_ino == before.st_ino);  // the very file, linked, not a copy
  CHECK(read_file(ref.path) == text);
  unnamed.reset();
  CHECK(names_in(tmp.path() / "store") == std::vector<std::string>{sha256_hex(text) + ".txt"});

  // An unnamed file that does not hold the text (its size differs) is not trusted: a copy.
  std::optional<unique_fd> other = store.write_unnamed("something else");
  REQUIRE(other);
  const std::string second = report(4096);
  const artifact_ref copied = store.save(second, sha256_hex(second), text_file{-1, {}, other->get()});
  REQUIRE(copied.saved);
  CHECK(copied.link_error.find("bytes, the text 4096") != std::string::npos);
  CHECK(lstat_of(copied.path).st_ino != 0);
  CHECK(read_file(copied.path) == second);
}
