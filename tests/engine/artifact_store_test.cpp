// The artifact store (docs/design.md §7) on real directories: content-addressed, byte-exact, private, atomic,
// never following or overwriting what it did not write, honest when it cannot save.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <regex>
#include <string>
#include <vector>

#include "engine/store/artifact_store.hpp"
#include "engine/fs/sha256.hpp"
#include "support/fs_fixtures.hpp"

namespace fs = std::filesystem;
using handoff::artifact_ref;
using handoff::artifact_store;
using handoff::sha256_hex;
using handoff::when_moved;
using namespace handoff::test;

namespace {

// A text of about `bytes` bytes with numbered lines, no trailing newline.
std::string long_text(std::size_t bytes) {
  std::string text;
  for (std::size_t i = 1; text.size() < bytes; ++i) {
    text += "line " + std::to_string(i) + ": the quick brown fox jumps over the lazy dog\n";
  }
  text.resize(bytes);
  return text;
}

// Every entry of the store must be <64 hex>.txt: no temp, no partial file, no client string.
void check_only_artifacts(const fs::path& dir, std::size_t expected_count) {
  static const std::regex artifact_name("[0-9a-f]{64}\\.txt");
  const auto names = names_in(dir);
  CHECK(names.size() == expected_count);
  for (const auto& n : names) {
    INFO("entry: ", n);
    CHECK(std::regex_match(n, artifact_name));
  }
}

}  // namespace

TEST_CASE("an artifact holds the text byte for byte under the name of its SHA-256") {
  temp_dir tmp;
  artifact_store store(tmp.path() / "store");

  std::string all_bytes;
  for (int b = 0; b < 256; ++b) all_bytes.push_back(static_cast<char>(b));
  const std::vector<std::pair<const char*, std::string>> cases = {
      {"no trailing newline", "verdict: ship it\nrisks: none"},
      {"trailing newline kept", "one line\n"},
      {"empty text", ""},
      {"binary-ish bytes, NUL and invalid UTF-8 included", all_bytes + all_bytes},
      {"CJK and emoji", "结论：可以合并。\n风险：无 🚀\n次の手順：テスト 👍🏽"},
      {"5 MiB text", long_text(5 * 1024 * 1024)},
  };
  for (const auto& test_case : cases) {
    const std::string& text = test_case.second;
    INFO(test_case.first);
    const artifact_ref ref = store.save(text);
    REQUIRE(ref.saved);
    CHECK(ref.error.empty());
    CHECK(ref.sha256 == sha256_hex(text));
    CHECK(ref.path == (tmp.path() / "store" / (ref.sha256 + ".txt")).string());
    CHECK(fs::path(ref.path).is_absolute());
    CHECK(read_file(ref.path) == text);
    const auto mapped = store.open(ref.sha256);
    REQUIRE(mapped.has_value());
    CHECK(mapped->view() == text);
  }
  check_only_artifacts(tmp.path() / "store", cases.size());
}

TEST_CASE("the same text twice is one file and the same reference") {
  temp_dir tmp;
  artifact_store store(tmp.path() / "store");
  const std::string text = long_text(100'000);
  const artifact_ref first = store.save(text);
  REQUIRE(first.saved);
  const ino_t inode = lstat_of(first.path).st_ino;

  const artifact_ref second = store.save(text);
  CHECK(second.saved);
  CHECK(second.path == first.path);
  CHECK(second.sha256 == first.sha256);
  CHECK(lstat_of(second.path).st_ino == inode);  // reused, not rewritten
  check_only_artifacts(store.dir(), 1);

  // A second store on the same directory (another process, say) reuses it as well.
  artifact_store again(tmp.path() / "store");
  const artifact_ref third = again.save(text, sha256_hex(text));
  CHECK(third.saved);
  CHECK(lstat_of(third.path).st_ino == inode);
}

TEST_CASE("a correct file already at the name is verified, then reused") {
  temp_dir tmp;
  artifact_store store(tmp.path() / "store");
  const std::string text = "planted by an earlier run\n";
  const fs::path at = store.path_of(sha256_hex(text));
  write_file(at, text, 0600);
  const ino_t inode = lstat_of(at).st_ino;

  const artifact_ref ref = store.save(text);
  CHECK(ref.saved);
  CHECK(ref.path == at.string());
  CHECK(lstat_of(at).st_ino == inode);
}

TEST_CASE("directories are 0700 and files 0600 whatever the umask") {
  // 0277 takes the owner's write bit too: only an explicit fchmod gets 0600 / 0700 then.
  for (const mode_t mask : {mode_t{0}, mode_t{022}, mode_t{077}, mode_t{0277}}) {
    INFO("umask ", mask);
    temp_dir tmp;
    umask_guard guard(mask);
    const fs::path dir = tmp.path() / "cache" / "handoff" / "results";
    artifact_store store(dir);
    const artifact_ref ref = store.save("mode check " + std::to_string(mask));
    REQUIRE(ref.saved);
    CHECK(mode_of(ref.path) == 0600);
    CHECK(S_ISREG(lstat_of(ref.path).st_mode));
    CHECK(mode_of(dir) == 0700);
    // The components we had to create are private too (the umask can only narrow 0700).
    CHECK(mode_of(tmp.path() / "cache") == (0700 & ~mask));
    CHECK(mode_of(tmp.path() / "cache" / "handoff") == (0700 & ~mask));
  }
}

TEST_CASE("a symlink at the artifact name is neither followed nor overwritten") {
  temp_dir tmp;
  artifact_store store(tmp.path() / "store");
  const std::string text = "the secret full report\n";
  const fs::path at = store.path_of(sha256_hex(text));

  SUBCASE("pointing at an existing file outside the store") {
    const fs::path victim = tmp.path() / "victim.txt";
    write_file(victim, "do not touch\n", 0600);
    fs::create_symlink(victim, at);
    const artifact_ref ref = store.save(text);
    CHECK_FALSE(ref.saved);
    CHECK(ref.path.empty());
    CHECK(ref.sha256 == sha256_hex(text));
    CHECK(ref.error.find("symlink") != std::string::npos);
    CHECK(read_file(victim) == "do not touch\n");
    CHECK(mode_of(victim) == 0600);
    CHECK(fs::is_symlink(at));
    CHECK_FALSE(store.open(sha256_hex(text)).has_value());
  }
  SUBCASE("pointing at the same text outside the store") {
    // Even a link to the right bytes is refused: the artifact must live in the store.
    const fs::path elsewhere = tmp.path() / "elsewhere.txt";
    write_file(elsewhere, text, 0600);
    fs::create_symlink(elsewhere, at);
    CHECK_FALSE(store.save(text).saved);
    CHECK_FALSE(store.open(sha256_hex(text)).has_value());
  }
  SUBCASE("dangling, pointing where a file would be created") {
    const fs::path target = tmp.path() / "created-through-link.txt";
    fs::create_symlink(target, at);
    CHECK_FALSE(store.save(text).saved);
    CHECK_FALSE(fs::exists(fs::symlink_status(target)));
    CHECK(fs::is_symlink(at));
  }
}

TEST_CASE("a FIFO at the artifact name is refused without blocking") {
  temp_dir tmp;
  artifact_store store(tmp.path() / "store");
  const std::string text = "a result\n";
  const fs::path at = store.path_of(sha256_hex(text));
  REQUIRE(::mkfifo(at.c_str(), 0600) == 0);

  auto saving = std::async(std::launch::async, [&] { return store.save(text); });
  if (saving.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    FAIL_CHECK("save() blocked on the FIFO");
    // Release a blocked reader so the test ends instead of hanging.
    const int writer = ::open(at.c_str(), O_WRONLY | O_NONBLOCK);
    if (writer >= 0) ::close(writer);
  }
  const artifact_ref ref = saving.get();
  CHECK_FALSE(ref.saved);
  CHECK(ref.error.find("FIFO") != std::string::npos);
  CHECK(S_ISFIFO(lstat_of(at).st_mode));

  auto opening = std::async(std::launch::async, [&] { return store.open(sha256_hex(text)); });
  REQUIRE(opening.wait_for(std::chrono::seconds(10)) == std::future_status::ready);
  CHECK_FALSE(opening.get().has_value());
}

TEST_CASE("a file at the name that is not exactly ours and exact is refused and left alone") {
  temp_dir tmp;
  artifact_store store(tmp.path() / "store");
  const std::string text = "the real final answer\n";
  const fs::path at = store.path_of(sha256_hex(text));

  struct planted {
    const char* label;
    std::string bytes;
    mode_t mode;
    const char* reason;  // a word the refusal must contain
  };
  const std::vector<planted> cases = {
      {"different size", "short\n", 0600, "different"},
      {"same size, different bytes", std::string(text.size(), 'x'), 0600, "different"},
      {"right bytes but readable by others", text, 0644, "0644"},
  };
  for (const auto& p : cases) {
    INFO(p.label);
    write_file(at, p.bytes, p.mode);
    const auto before = lstat_of(at);
    const artifact_ref ref = store.save(text);
    CHECK_FALSE(ref.saved);
    CHECK(ref.path.empty());
    CHECK(ref.error.find(p.reason) != std::string::npos);
    CHECK(read_file(at) == p.bytes);
    const auto after = lstat_of(at);
    CHECK(after.st_ino == before.st_ino);
    CHECK(after.st_mtim.tv_nsec == before.st_mtim.tv_nsec);
    CHECK(mode_of(at) == p.mode);
    fs::remove(at);
  }
  SUBCASE("owned by another uid") {
    write_file(at, text, 0600);
    REQUIRE(::chown(at.c_str(), 12345, 12345) == 0);
    const artifact_ref ref = store.save(text);
    CHECK_FALSE(ref.saved);
    CHECK(ref.error.find("uid 12345") != std::string::npos);
    CHECK(lstat_of(at).st_uid == 12345);
    CHECK_FALSE(store.open(sha256_hex(text)).has_value());
  }
}

TEST_CASE("a store directory that is a symlink, open to others or not ours is refused") {
  temp_dir tmp;
  const fs::path real = tmp.path() / "real";
  fs::create_directory(real);
  fs::permissions(real, fs::perms::owner_all, fs::perm_options::replace);

  SUBCASE("a symlink to a good directory") {
    fs::create_directory_symlink(real, tmp.path() / "link");
    try {
      artifact_store store(tmp.path() / "link");
      FAIL("a symlinked store was accepted");
    } catch (const std::runtime_error& e) {
      CHECK(std::string(e.what()).find("is a symlink") != std::string::npos);
    }
  }
  SUBCASE("mode 0777") {
    fs::permissions(real, fs::perms::all, fs::perm_options::replace);
    try {
      artifact_store store(real);
      FAIL("a 0777 store was accepted");
    } catch (const std::runtime_error& e) {
      CHECK(std::string(e.what()) == "artifact dir " + real.string() +
                                         " is mode 0777; it must be 0700 (chmod 700 " +
                                         real.string() + ")");
    }
    CHECK(mode_of(real) == 0777);  // reported, not silently changed
  }
  SUBCASE("mode 0750") {
    fs::permissions(real, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec,
                    fs::perm_options::replace);
    CHECK_THROWS_WITH_AS(artifact_store{real}, doctest::Contains("0750"), std::runtime_error);
  }
  SUBCASE("owned by another uid") {
    REQUIRE(::chown(real.c_str(), 12345, 12345) == 0);
    CHECK_THROWS_WITH_AS(artifact_store{real}, doctest::Contains("owned by uid 12345"),
                         std::runtime_error);
  }
  SUBCASE("a regular file") {
    write_file(tmp.path() / "file", "x", 0600);
    CHECK_THROWS_WITH_AS(artifact_store{tmp.path() / "file"},
                         doctest::Contains("not a directory"), std::runtime_error);
  }
  SUBCASE("a relative path") {
    CHECK_THROWS_WITH_AS(artifact_store{"relative/store"}, doctest::Contains("absolute"),
                         std::runtime_error);
  }
  SUBCASE("the same directory once fixed is accepted") {
    artifact_store store(real.string() + "/");
    CHECK(store.dir() == real);
    CHECK(store.save("ok").saved);
  }
}

TEST_CASE("a store whose path is swapped for a symlink saves nothing rather than name a wrong path") {
  temp_dir tmp;
  const fs::path dir = tmp.path() / "store";
  const fs::path moved = tmp.path() / "store.moved";
  const fs::path decoy = tmp.path() / "decoy";
  const std::string text = "after the swap\n";
  for (const when_moved mode : {when_moved::refuse, when_moved::reopen}) {
    CAPTURE(static_cast<int>(mode));
    fs::remove_all(dir);
    fs::remove_all(moved);
    fs::remove_all(decoy);
    artifact_store store(dir, mode);
    fs::create_directory(decoy);
    fs::rename(dir, moved);
    fs::create_directory_symlink(decoy, dir);

    // The footer would show dir/<sha>.txt, which now leads into the decoy: nothing is saved.
    const artifact_ref ref = store.save(text);
    CHECK_FALSE(ref.saved);
    CHECK(ref.path.empty());
    CHECK(ref.error.find("replaced by a symlink") != std::string::npos);
    CHECK_FALSE(store.open(sha256_hex(text)).has_value());
    CHECK(names_in(decoy).empty());
    CHECK(names_in(moved).empty());

    // The symlink goes: a store that reopens creates the directory again (0700) and saves there.
    fs::remove(dir);
    const artifact_ref after = store.save(text);
    CHECK(after.saved == (mode == when_moved::reopen));
    if (mode == when_moved::reopen) {
      CHECK(read_file(dir / (sha256_hex(text) + ".txt")) == text);
      CHECK(mode_of(dir) == 0700);
    } else {
      CHECK(after.error.find("was removed") != std::string::npos);
    }
  }
}

TEST_CASE("artifact names come only from the hash, never from the text or a client") {
  temp_dir tmp;
  artifact_store store(tmp.path() / "store");
  const std::vector<std::string> texts = {
      "../../etc/passwd", "/tmp/evil.txt", "title: Refactor the parser", "a\0b", ".tmp-x",
      std::string(300, '/')};
  for (const auto& t : texts) CHECK(store.save(t).saved);
  check_only_artifacts(store.dir(), texts.size());
  CHECK(names_in(tmp.path()) == std::vector<std::string>{"store"});
}

TEST_CASE("open() accepts only 64 lowercase hex names of present artifacts") {
  temp_dir tmp;
  artifact_store store(tmp.path() / "store");
  const std::string sha = store.save("present").sha256;
  CHECK(store.open(sha).has_value());
  CHECK_FALSE(store.open(sha256_hex("absent")).has_value());
  CHECK_FALSE(store.open(sha + ".txt").has_value());
  CHECK_FALSE(store.open("../" + sha.substr(3)).has_value());
  std::string upper = sha;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  CHECK_FALSE(store.open(upper).has_value());
  // save() with a hash that is not one refuses rather than inventing a name.
  const artifact_ref bad = store.save("text", "../../escape");
  CHECK_FALSE(bad.saved);
  CHECK(names_in(store.dir()).size() == 1);
}

TEST_CASE("a full disk gives saved=false with the reason and leaves nothing behind") {
  temp_dir tmp;
  const fs::path mount_point = tmp.path() / "small";
  fs::create_directory(mount_point);
  tmpfs_mount small(mount_point, "size=64k");
  if (!small.mounted()) {
    MESSAGE("skipped: cannot mount a tmpfs here (", small.why_not(), ")");
    return;
  }
  artifact_store store(mount_point / "store");
  const std::string text = long_text(512 * 1024);
  const artifact_ref ref = store.save(text);
  CHECK_FALSE(ref.saved);
  CHECK(ref.path.empty());
  CHECK(ref.sha256 == sha256_hex(text));
  CHECK(ref.error == "No space left on device while writing the artifact");
  CHECK(names_in(store.dir()).empty());

  // The store still works for what fits.
  const artifact_ref small_ref = store.save("fits\n");
  CHECK(small_ref.saved);
  check_only_artifacts(store.dir(), 1);
}

TEST_CASE("a read-only filesystem gives saved=false with the reason") {
  temp_dir tmp;
  const fs::path mount_point = tmp.path() / "ro";
  fs::create_directory(mount_point);
  tmpfs_mount disk(mount_point, "size=1m");
  if (!disk.mounted()) {
    MESSAGE("skipped: cannot mount a tmpfs here (", disk.why_not(), ")");
    return;
  }
  artifact_store store(mount_point / "store");
  const std::string kept = "saved before the remount\n";
  REQUIRE(store.save(kept).saved);
  REQUIRE(disk.remount_read_only());

  const artifact_ref ref = store.save("a new text\n");
  CHECK_FALSE(ref.saved);
  CHECK(ref.error.find("Read-only file system") != std::string::npos);
  check_only_artifacts(store.dir(), 1);
  // What was saved before can still be verified and reused.
  CHECK(store.save(kept).saved);
}

TEST_CASE("permission denied gives saved=false with the reason (as an unprivileged uid)") {
  // Root ignores permission bits, so the store is used from a child that drops to another uid.
  temp_dir tmp;
  const fs::path dir = tmp.path() / "store";
  const uid_t user = 54321;
  REQUIRE(::chmod(tmp.path().c_str(), 0755) == 0);
  REQUIRE(::mkdir(dir.c_str(), 0700) == 0);
  REQUIRE(::chown(dir.c_str(), user, user) == 0);
  int pipe_fds[2];
  REQUIRE(::pipe(pipe_fds) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // Child: no doctest here; the outcome goes back through the pipe as text.
    ::close(pipe_fds[0]);
    std::string out;
    if (::setgid(user) != 0 || ::setuid(user) != 0) {
      out = "setuid failed";
    } else {
      try {
        artifact_store store(dir);
        const bool before = store.save("saved while writable\n").saved;
        ::chmod(dir.c_str(), 0500);
        const artifact_ref ref = store.save("refused while read-only\n");
        out = std::string(before ? "1" : "0") + (ref.saved ? "1" : "0") + ref.error;
      } catch (const std::exception& e) {
        out = std::string("exception: ") + e.what();
      }
    }
    [[maybe_unused]] const auto n = ::write(pipe_fds[1], out.data(), out.size());
    ::_exit(0);
  }
  ::close(pipe_fds[1]);
  std::string out;
  char buf[512];
  for (ssize_t n; (n = ::read(pipe_fds[0], buf, sizeof buf)) > 0;) {
    out.append(buf, static_cast<std::size_t>(n));
  }
  ::close(pipe_fds[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  INFO("child said: ", out);
  REQUIRE(out.size() >= 2);
  CHECK(out.substr(0, 2) == "10");
  CHECK(out.find("Permission denied") != std::string::npos);
  ::chmod(dir.c_str(), 0700);
  check_only_artifacts(dir, 1);
}

namespace {

// `text` as a mapped file, as the queue hands its held texts to artifact_store::repair.
handoff::mapped_file mapped_copy(const fs::path& dir, const std::string& text) {
  const fs::path at = dir / ("copy-" + sha256_hex(text));
  write_file(at, text, 0600);
  const handoff::unique_fd fd(::open(at.c_str(), O_RDONLY | O_CLOEXEC));
  REQUIRE(fd);
  return handoff::mapped_file(fd.get());
}

}  // namespace

TEST_CASE("a save that leaves the sync to its caller is whole at its name at once, and sync() skips what is not there") {
  temp_dir tmp;
  artifact_store store(tmp.path() / "store");
  const std::string text = long_text(40000);
  const artifact_ref ref = store.save(text, sha256_hex(text), std::nullopt, handoff::when_synced::by_caller);
  REQUIRE(ref.saved);
  CHECK(ref.path == store.path_of(sha256_hex(text)).string());
  CHECK(read_file(ref.path) == text);
  CHECK(mode_of(ref.path) == 0600);
  check_only_artifacts(store.dir(), 1);
  CHECK(store.sync({sha256_hex(text)}).empty());
  // Collected meanwhile, or never saved: nothing to sync. A name that is no hash is no file.
  CHECK(store.sync({sha256_hex("never saved"), "../../etc/passwd"}).empty());
  CHECK(read_file(ref.path) == text);
  // A save that syncs finds it there and reuses it, the same file.
  const ino_t inode = lstat_of(ref.path).st_ino;
  CHECK(store.save(text).saved);
  CHECK(lstat_of(ref.path).st_ino == inode);
}

TEST_CASE("a spare made ahead is the file the next written text goes into, made once, and never one of a moved directory") {
  umask_guard guard(0);
  temp_dir tmp;
  const fs::path dir = tmp.path() / "store";
  artifact_store store(dir, when_moved::reopen);
  CHECK_FALSE(store.has_spare());
  CHECK(unnamed_files_in(dir).empty());
  store.keep_spare();
  store.keep_spare();  // one is held already: no second
  REQUIRE(store.has_spare());
  const std::vector<ino_t> spare = unnamed_files_in(dir);
  REQUIRE(spare.size() == 1);
  check_only_artifacts(dir, 0);  // no name until a text is in it

  const std::string text = long_text(100 * 1024);
  const artifact_ref ref = store.save(text, sha256_hex(text), std::nullopt, handoff::when_synced::by_caller);
  REQUIRE_MESSAGE(ref.saved, ref.error);
  CHECK(lstat_of(ref.path).st_ino == spare[0]);  // the spare, now named by the hash
  CHECK(lstat_of(ref.path).st_nlink == 1);
  CHECK(mode_of(ref.path) == 0600);
  CHECK(read_file(ref.path) == text);
  CHECK_FALSE(store.has_spare());
  CHECK(unnamed_files_in(dir).empty());

  // A text found at its name already writes nothing and leaves the spare for the next.
  store.keep_spare();
  CHECK(store.save(text).saved);
  CHECK(store.has_spare());
  // write_unnamed() takes it too.
  const std::vector<ino_t> second = unnamed_files_in(dir);
  REQUIRE(second.size() == 1);
  std::optional<handoff::unique_fd> written = store.write_unnamed("written ahead");
  REQUIRE(written);
  struct stat st {};
  REQUIRE(::fstat(written->get(), &st) == 0);
  CHECK(st.st_ino == second[0]);
  CHECK(static_cast<std::size_t>(st.st_size) == std::string_view("written ahead").size());
  CHECK(mode_of(dir) == 0700);
  written.reset();

  // Made before the directory moved: not used, and closed; the text goes to the new directory.
  store.keep_spare();
  const std::vector<ino_t> old = unnamed_files_in(dir);
  REQUIRE(old.size() == 1);
  // Held open here too, so that its inode number cannot be given to the next file made.
  handoff::unique_fd held_old;
  for (const auto& e : fs::directory_iterator("/proc/self/fd")) {
    struct stat fd_st {};
    if (!held_old && ::stat(e.path().c_str(), &fd_st) == 0 && fd_st.st_ino == old[0])
      held_old.reset(::open(e.path().c_str(), O_RDONLY | O_CLOEXEC));
  }
  REQUIRE(held_old);
  fs::rename(dir, tmp.path() / "store.moved");
  store.keep_spare();  // holds one already; and making one never creates the store again
  CHECK_FALSE(fs::exists(dir));
  const std::string after = "after the move\n";
  const artifact_ref moved = store.save(after);
  REQUIRE_MESSAGE(moved.saved, moved.error);
  CHECK(lstat_of(moved.path).st_ino != old[0]);
  CHECK(read_file(dir / (sha256_hex(after) + ".txt")) == after);
  held_old.reset();
  CHECK(unnamed_files_in(tmp.path() / "store.moved").empty());  // and the store closed it
  CHECK(names_in(tmp.path() / "store.moved").size() == 1);  // the first text only
}

TEST_CASE("repair rewrites an artifact a crash cut short and leaves whole, absent and foreign ones alone") {
  temp_dir tmp;
  artifact_store store(tmp.path() / "store");
  const std::string text = long_text(40000);
  const std::string sha = sha256_hex(text);
  const fs::path at = store.path_of(sha);
  int mapped = 0;
  const auto text_of = [&] {
    ++mapped;
    return mapped_copy(tmp.path(), text);
  };

  SUBCASE("cut short: rewritten whole, 0600, and said so") {
    write_file(at, text.substr(0, 4096), 0600);  // what a power loss may leave of an unsynced write
    const std::string said = store.repair(sha, text_of);
    CHECK_MESSAGE(said.find("rewritten") != std::string::npos, said);
    CHECK(read_file(at) == text);
    CHECK(mode_of(at) == 0600);
    check_only_artifacts(store.dir(), 1);
    CHECK(store.repair(sha, text_of).empty());  // whole now
  }
  SUBCASE("empty, as ext4 leaves a file whose blocks were never allocated") {
    write_file(at, "", 0600);
    CHECK_FALSE(store.repair(sha, text_of).empty());
    CHECK(read_file(at) == text);
  }
  SUBCASE("the same size with other bytes") {
    std::string other = text;
    other[20000] = 'X';
    write_file(at, other, 0600);
    CHECK_FALSE(store.repair(sha, text_of).empty());
    CHECK(read_file(at) == text);
  }
  SUBCASE("whole: left as it is") {
    REQUIRE(store.save(text).saved);
    const ino_t inode = lstat_of(at).st_ino;
    CHECK(store.repair(sha, text_of).empty());
    CHECK(lstat_of(at).st_ino == inode);
  }
  SUBCASE("absent: nothing made, the text not even mapped") {
    CHECK(store.repair(sha, text_of).empty());
    CHECK_FALSE(fs::exists(fs::symlink_status(at)));
    CHECK(mapped == 0);
  }
  SUBCASE("a symlink, or a file open to others: not ours to mend") {
    const fs::path victim = tmp.path() / "victim.txt";
    write_file(victim, "do not touch\n", 0600);
    fs::create_symlink(victim, at);
    CHECK(store.repair(sha, text_of).empty());
    CHECK(read_file(victim) == "do not touch\n");
    CHECK(fs::is_symlink(at));
    fs::remove(at);
    write_file(at, "short", 0644);
    CHECK(store.repair(sha, text_of).empty());
    CHECK(read_file(at) == "short");
  }
}
