// The durable queue (docs/design.md §8) on real directories: what put() acknowledged survives a
// restart (a new pending_queue on the same directory), leaves only when delivered or consumed,
// and a crash's leftovers are cleaned up on recovery. The journal itself (torn tails, damaged
// entries, group commit, segments) is journal_test.cpp's.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "engine/queue/pending_queue.hpp"
#include "engine/fs/sha256.hpp"
#include "support/fs_fixtures.hpp"
#include "support/queue_fixtures.hpp"

namespace fs = std::filesystem;
using namespace handoff;
using namespace handoff::test;

namespace {

// Texts of this many bytes or more are kept as files in these tests; shorter ones inline.
constexpr std::size_t file_bytes = 64;
const queue_options small_files{.file_text_bytes = file_bytes};

std::string large(const std::string& seed) { return seed + std::string(file_bytes, '.') + "\n"; }

std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

// Entries of one queue area, sorted.
std::vector<std::string> area(const fs::path& queue_dir, const char* name) { return names_in(queue_dir / name); }

// A queue on a disk of 64 KiB and at most 64 inodes (so both can run out in a test) that holds
// one 20 KiB text as a file (`fits`); nothing when the test may not mount such a disk.
struct full_disk_queue {
  full_disk_queue() {
    if (small.mount.mounted()) q.emplace(dir, options).queue.put(make_completion("p", "first"), fits);
  }
  small_disk small{"size=64k,nr_inodes=64"};
  const fs::path dir = small.queue;
  const fs::path segment = dir / "journal" / "0000000000000001.log";
  const queue_options options{.file_text_bytes = 16 * 1024};
  const std::string fits = std::string(20 * 1024, 'a');
  std::optional<opened_queue> q;
};

// Once there is room again the queue takes a completion, and after a restart it holds the
// texts it held before (`held`, in order) and then that one. Closes `q`.
void goes_on_after_full_disk(std::optional<opened_queue>& q, const fs::path& dir, const queue_options& options,
                             const std::vector<std::string>& held) {
  const auto later = q->queue.put(make_completion("p", "later"), "later text").held;
  q.reset();
  opened_queue again(dir, options);
  INFO(joined(again.problems));
  CHECK(again.problems.empty());
  REQUIRE(again.state.results.size() == held.size() + 1);
  for (std::size_t i = 0; i < held.size(); ++i) CHECK(again.queue.open_text(again.state.results[i]).view() == held[i]);
  check_same(again.state.results.back(), later);
  CHECK(again.queue.open_text(again.state.results.back()).view() == "later text");
}

}  // namespace

TEST_CASE("held results survive a restart, in completion order, with their exact texts") {
  temp_dir tmp;
  const fs::path dir = tmp.path() / "queue";
  const std::vector<std::string> texts = {"first report\nverdict: ok", large("second\n"),
                                          "first report\nverdict: ok",  // shared with the first
                                          "结论：失败 ❌\n", large("second\n"),  // a shared file
                                          ""};
  std::vector<held_result> put;
  {
    opened_queue q(dir, small_files);
    CHECK(q.state.results.empty());
    CHECK(q.problems.empty());
    for (std::size_t i = 0; i < texts.size(); ++i) {
      const auto status = i == 3 ? result_status::error : result_status::done;
      const auto outcome =
          q.queue.put(make_completion("parent-" + std::to_string(i % 2), "child-" + std::to_string(i), status), texts[i]);
      CHECK_FALSE(outcome.duplicate);
      CHECK(outcome.held.sha256 == sha256_hex(texts[i]));
      CHECK(outcome.held.shape.bytes == texts[i].size());
      put.push_back(outcome.held);
    }
    for (std::size_t i = 1; i < put.size(); ++i) CHECK(put[i - 1].seq < put[i].seq);
  }
  opened_queue again(dir, small_files);
  INFO(joined(again.problems));
  CHECK(again.problems.empty());
  REQUIRE(again.state.results.size() == put.size());
  for (std::size_t i = 0; i < put.size(); ++i) {
    check_same(again.state.results[i], put[i]);
    CHECK(again.queue.open_text(again.state.results[i]).view() == texts[i]);
    CHECK(again.queue.text_file(again.state.results[i]).has_value() == (texts[i].size() >= file_bytes));
  }
  // The large text once, as a file; the others inside the one journal segment.
  CHECK(area(dir, "texts") == std::vector<std::string>{text_name(texts[1])});
  CHECK(area(dir, "journal") == std::vector<std::string>{"0000000000000001.log"});
  const auto stats = again.queue.statistics();
  CHECK(stats.results == put.size());
  CHECK(stats.text_bytes == texts[0].size() + texts[1].size() + texts[3].size());
  CHECK(stats.journal_bytes == journal_end(dir / "journal" / "0000000000000001.log"));

  // Seqs continue after the highest one recovered.
  const auto next = again.queue.put(make_completion("parent-9", "child-9"), "later");
  CHECK(next.held.seq == put.back().seq + 1);
}

TEST_CASE("a large text goes into the unnamed file opened ahead of it, and the next one is opened after") {
  temp_dir tmp;
  const fs::path dir = tmp.path() / "queue";
  const std::string text = large("report\n");
  {
    opened_queue q(dir, small_files);
    q.queue.put(make_completion("p", "small"), "short");  // a group: the writer opens a spare after it
    // The file is open (and listed) a moment before the queue holds it for the next put: wait for
    // the queue's word, not for the file, or the put may come first and open its own.
    for (int i = 0; i < 5000 && !q.queue.has_spare_text(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    REQUIRE(q.queue.has_spare_text());
    const std::vector<ino_t> spare = unnamed_files_in(dir / "texts");
    REQUIRE(spare.size() == 1);

    q.queue.put(make_completion("p", "large"), text);
    struct stat st {};
    REQUIRE(::stat((dir / "texts" / text_name(text)).c_str(), &st) == 0);
    CHECK(st.st_ino == spare[0]);  // the spare, now named by its hash
    CHECK(st.st_nlink == 1);
    const std::vector<ino_t> next = unnamed_files_after(dir / "texts", spare);
    REQUIRE(next.size() == 1);
    CHECK(next[0] != spare[0]);
  }
  // The spare goes with the queue; what it held survives a restart like any other text.
  CHECK(unnamed_files_in(dir / "texts").empty());
  opened_queue again(dir, small_files);
  CHECK(again.problems.empty());
  REQUIRE(again.state.results.size() == 2);
  CHECK(again.queue.open_text(again.state.results[1]).view() == text);
  CHECK(area(dir, "texts") == std::vector<std::string>{text_name(text)});
}

TEST_CASE("one queue per directory: a second opening while the first lives is refused, naming the lock") {
  temp_dir tmp;
  const fs::path dir = tmp.path() / "queue";
  std::optional<opened_queue> first(std::in_place, dir, small_files);
  const auto held = first->queue.put(make_completion("p", "c"), "text").held;
  try {
    pending_queue second(dir, small_files);
    FAIL("a second queue opened the same directory");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()) == "the queue " + dir.string() + " is in use by another handoffd (its lock is held)");
  }
  first.reset();
  opened_queue again(dir, small_files);  // the lock goes with the first
  CHECK(again.state.results.size() == 1);
  CHECK(again.state.results.front().seq == held.seq);
}

TEST_CASE("queue files are private: 0700 directories, 0600 files, no client string in a name") {
  temp_dir tmp;
  umask_guard loose(0);
  const fs::path dir = tmp.path() / "queue";
  opened_queue q(dir, small_files);
  const completion c = make_completion("../../etc", "passwd");
  const auto held = q.queue.put(c, "text").held;
  const auto big = q.queue.put(make_completion("../../etc", "shadow"), large("etc")).held;
  q.queue.begin_delivery({"../../etc", "../delivery", {held.seq}, "{}"});
  CHECK(q.queue.consume({big.seq}).empty());  // a tombstone file in done/
  const auto other = q.queue.put(make_completion("../../etc", "group"), large("etc2")).held;
  CHECK(mode_of(dir) == 0700);
  CHECK(names_in(dir) == std::vector<std::string>{"done", "journal", "lock", "texts"});
  CHECK(mode_of(dir / "lock") == 0600);
  for (const char* sub : {"texts", "journal", "done"}) {
    INFO(std::string(sub));
    CHECK(mode_of(dir / sub) == 0700);
    REQUIRE_FALSE(area(dir, sub).empty());
    for (const auto& name : area(dir, sub)) {
      INFO(name);
      CHECK(S_ISREG(lstat_of(dir / sub / name).st_mode));
      CHECK(mode_of(dir / sub / name) == 0600);
      for (const char* client : {"etc", "passwd", "shadow", "group", "delivery", ".."})
        CHECK(name.find(client) == std::string::npos);
    }
  }
  CHECK(area(dir, "journal") == std::vector<std::string>{"0000000000000001.log"});
  CHECK(area(dir, "done") == std::vector<std::string>{key_of("../../etc", "shadow")});
  CHECK(area(dir, "texts") == std::vector<std::string>{text_name(large("etc2"))});
  CHECK_FALSE(q.queue.text_file(held).has_value());  // a short text is kept in the journal
  CHECK(q.queue.text_file(other) == dir / "texts" / text_name(large("etc2")));
}

TEST_CASE("a resend is idempotent, and another text for the same child is a conflict") {
  temp_dir tmp;
  const fs::path dir = tmp.path() / "queue";
  const completion c = make_completion("p", "c");
  const completion big = make_completion("p", "big");
  std::uint64_t seq = 0;
  std::size_t journal_bytes = 0;
  {
    opened_queue q(dir, small_files);
    seq = q.queue.put(c, "the answer").held.seq;
    q.queue.put(big, large("the answer"));
    journal_bytes = journal_end(dir / "journal" / "0000000000000001.log");
    const auto again = q.queue.put(c, "the answer");
    CHECK(again.duplicate);
    CHECK_FALSE(again.delivered);
    CHECK(again.held.seq == seq);
    CHECK(q.queue.put(big, large("the answer")).duplicate);
    CHECK_THROWS_AS(q.queue.put(c, "another answer"), queue_conflict);
    CHECK_THROWS_AS(q.queue.put(big, large("another answer")), queue_conflict);
    CHECK(q.queue.statistics().results == 2);
    // Neither a duplicate nor a conflict writes anything.
    CHECK(journal_end(dir / "journal" / "0000000000000001.log") == journal_bytes);
    CHECK(area(dir, "texts") == std::vector<std::string>{text_name(large("the answer"))});
  }
  opened_queue q(dir, small_files);
  const auto after_restart = q.queue.put(c, "the answer");
  CHECK(after_restart.duplicate);
  CHECK(after_restart.held.seq == seq);
  CHECK_THROWS_AS(q.queue.put(c, "another answer"), queue_conflict);
  CHECK_THROWS_AS(q.queue.put(big, large("another answer")), queue_conflict);
  CHECK(journal_end(dir / "journal" / "0000000000000001.log") == journal_bytes);
  // The same child id under another parent is another completion, sharing the text file.
  CHECK_FALSE(q.queue.put(make_completion("other parent", "big"), large("the answer")).duplicate);
  CHECK(q.queue.statistics().results == 3);
  CHECK(area(dir, "texts").size() == 1);
}

TEST_CASE("a consumed result is gone after restart and its resend is a duplicate until expiry") {
  temp_dir tmp;
  const fs::path dir = tmp.path() / "queue";
  const completion a = make_completion("p", "a");
  const completion b = make_completion("p", "b");
  std::uint64_t seq_a = 0;
  {
    opened_queue q(dir, small_files);
    seq_a = q.queue.put(a, large("text of a")).held.seq;
    q.queue.put(b, large("text of b"));
    CHECK(q.queue.consume({seq_a, 999}).empty());  // unknown seqs are ignored
    CHECK(q.queue.statistics().results == 1);
    CHECK(q.queue.statistics().tombstones == 1);
    CHECK(q.queue.was_delivered("p", "a"));
    CHECK_FALSE(q.queue.was_delivered("p", "b"));
    // Its text file went with it.
    CHECK(area(dir, "texts") == std::vector<std::string>{text_name(large("text of b"))});
  }
  opened_queue q(dir, small_files);
  INFO(joined(q.problems));
  CHECK(q.problems.empty());
  REQUIRE(q.state.results.size() == 1);
  CHECK(q.state.results[0].info.child_id == "b");
  CHECK(q.queue.open_text(q.state.results[0]).view() == large("text of b"));
  CHECK(area(dir, "texts") == std::vector<std::string>{text_name(large("text of b"))});
  CHECK(area(dir, "done") == std::vector<std::string>{key_of("p", "a")});
  CHECK(q.queue.was_delivered("p", "a"));

  const auto resend = q.queue.put(a, large("text of a"));
  CHECK(resend.duplicate);
  CHECK(resend.delivered);
  CHECK(resend.held.seq == seq_a);
  CHECK(q.queue.statistics().results == 1);  // nothing new is held
  CHECK(area(dir, "texts").size() == 1);
  CHECK_THROWS_AS(q.queue.put(a, "a different text of a"), queue_conflict);
  CHECK_THROWS_AS(q.queue.open_text(held_result{seq_a, a, sha256_hex(large("text of a")), {}, 0}), queue_error);

  CHECK(q.queue.expire_tombstones(std::chrono::hours(1)) == 0);  // too young
  CHECK(q.queue.expire_tombstones(std::chrono::seconds(0)) == 1);
  CHECK(area(dir, "done").empty());
  CHECK_FALSE(q.queue.was_delivered("p", "a"));
  const auto fresh = q.queue.put(a, "text of a, again");
  CHECK_FALSE(fresh.duplicate);
  CHECK(fresh.held.seq > seq_a);
}

TEST_CASE("seqs stay increasing across restarts even when everything was consumed") {
  temp_dir tmp;
  const fs::path dir = tmp.path() / "queue";
  std::uint64_t last = 0;
  for (int round = 0; round < 3; ++round) {
    opened_queue q(dir);
    CHECK(q.state.results.empty());
    std::vector<std::uint64_t> seqs;
    for (int i = 0; i < 3; ++i) {
      const std::uint64_t seq = q.queue.put(make_completion("p", std::to_string(round) + "-" + std::to_string(i)), "t").held.seq;
      CHECK(seq > last);
      last = seq;
      seqs.push_back(seq);
    }
    q.queue.consume(seqs);
  }
}

TEST_CASE("deliveries survive a restart with their exact payload until acknowledged") {
  temp_dir tmp;
  const fs::path dir = tmp.path() / "queue";
  const std::string payload = R"({"parentId":"p","deliveryId":"d1","text":"Subagent a \"A\" finished.\n\nline ✓"})";
  std::vector<std::uint64_t> seqs;
  {
    opened_queue q(dir, small_files);
    for (const char* child : {"a", "b", "c"})
      seqs.push_back(q.queue.put(make_completion("p", child), large(std::string("text ") + child)).held.seq);
    q.queue.begin_delivery({"p", "d1", {seqs[0], seqs[1]}, payload});
    CHECK(q.queue.statistics().deliveries == 1);
  }
  for (int restart = 0; restart < 2; ++restart) {  // an unacknowledged delivery stays, restart after restart
    opened_queue q(dir, small_files);
    INFO(joined(q.problems));
    CHECK(q.problems.empty());
    REQUIRE(q.state.deliveries.size() == 1);
    const stored_delivery& d = q.state.deliveries[0];
    CHECK(d.parent_id == "p");
    CHECK(d.delivery_id == "d1");
    CHECK(d.seqs == std::vector<std::uint64_t>{seqs[0], seqs[1]});
    CHECK(d.payload == payload);
    CHECK(q.queue.statistics().deliveries == 1);
    CHECK(q.state.results.size() == 3);
  }
  {
    opened_queue q(dir, small_files);
    CHECK(q.queue.complete_delivery("d1").empty());
    CHECK(q.queue.complete_delivery("d1").empty());  // a repeated acknowledgement is harmless
    CHECK(q.queue.complete_delivery("never sent").empty());
    CHECK(q.queue.statistics().deliveries == 0);
    CHECK(q.queue.statistics().results == 1);
  }
  opened_queue q(dir, small_files);
  CHECK(q.problems.empty());
  CHECK(q.state.deliveries.empty());
  REQUIRE(q.state.results.size() == 1);
  CHECK(q.state.results[0].seq == seqs[2]);
  CHECK(q.queue.put(make_completion("p", "a"), large("text a")).delivered);
  CHECK(area(dir, "texts") == std::vector<std::string>{text_name(large("text c"))});
  CHECK(area(dir, "done") == sorted({key_of("p", "a"), key_of("p", "b")}));
}

TEST_CASE("a delivery keeps the results still held and goes when none is left") {
  temp_dir tmp;
  const fs::path dir = tmp.path() / "queue";
  std::uint64_t a = 0;
  std::uint64_t b = 0;
  {
    opened_queue q(dir);
    a = q.queue.put(make_completion("p", "a"), "ta").held.seq;
    b = q.queue.put(make_completion("p", "b"), "tb").held.seq;
    q.queue.begin_delivery({"p", "d1", {a, b}, "payload"});
    q.queue.consume({a});  // a wait took it while the delivery was unacknowledged
  }
  {
    opened_queue q(dir);
    REQUIRE(q.state.deliveries.size() == 1);
    CHECK(q.state.deliveries[0].seqs == std::vector<std::uint64_t>{b});
    CHECK(q.state.deliveries[0].payload == "payload");
    REQUIRE(q.state.results.size() == 1);
    CHECK(q.queue.open_text(q.state.results[0]).view() == "tb");
    q.queue.consume({b});
  }
  opened_queue q(dir);
  CHECK(q.state.deliveries.empty());
  CHECK(q.state.results.empty());
  CHECK(q.queue.statistics().deliveries == 0);
}

TEST_CASE("recovery removes temp files and unused texts, and drops completions whose text file is wrong") {
  temp_dir tmp;
  const fs::path dir = tmp.path() / "queue";
  const completion good = make_completion("p", "good");
  const completion inline_good = make_completion("p", "inline");
  const completion textless = make_completion("p", "textless");
  const completion tampered = make_completion("p", "tampered");
  {
    opened_queue q(dir, small_files);
    q.queue.put(good, large("good text"));
    q.queue.put(inline_good, "inline text");
    q.queue.put(textless, large("textless text"));
    q.queue.put(tampered, large("tampered text"));
  }
  const std::size_t journal_bytes = journal_end(dir / "journal" / "0000000000000001.log");
  // What a crash, a full disk or a stray editor can leave:
  write_file(dir / "texts" / ".tmp-fedcba9876543210", "half a text", 0600);
  write_file(dir / "done" / ".tmp-0123456789abcdef", "{\"half", 0600);
  fs::remove(dir / "texts" / text_name(large("textless text")));
  std::string wrong = large("tampered text");
  wrong[0] = 'T';  // same size, other bytes
  write_file(dir / "texts" / text_name(large("tampered text")), wrong, 0600);
  write_file(dir / "texts" / text_name("orphan"), "orphan", 0600);
  write_file(dir / "texts" / "notes", "a stranger", 0600);
  write_file(dir / "done" / "notes", "a stranger", 0600);

  opened_queue q(dir, small_files);
  const std::string problems = joined(q.problems);
  INFO(problems);
  REQUIRE(q.state.results.size() == 2);
  CHECK(q.state.results[0].info.child_id == "good");
  CHECK(q.queue.open_text(q.state.results[0]).view() == large("good text"));
  CHECK(q.state.results[1].info.child_id == "inline");
  CHECK(q.queue.open_text(q.state.results[1]).view() == "inline text");
  CHECK(q.queue.statistics().tombstones == 0);
  CHECK(area(dir, "texts") == sorted({text_name(large("good text")), "notes"}));
  CHECK(area(dir, "done") == std::vector<std::string>{"notes"});
  CHECK(journal_end(dir / "journal" / "0000000000000001.log") == journal_bytes);  // nothing cut
  // Two temps, a missing and a tampered text (the completion each, and the tampered file),
  // the orphan, and the two strangers left alone.
  CHECK(q.problems.size() == 8);
  for (const char* expected : {"texts/.tmp-fedcba9876543210", "done/.tmp-0123456789abcdef", "left alone texts/notes",
                               "left alone done/notes", "does not match its name", "no record uses it"}) {
    CHECK(problems.find(expected) != std::string::npos);
  }
  CHECK(problems.find("dropped texts/" + text_name(large("tampered text"))) != std::string::npos);
  CHECK(problems.find("dropped texts/" + text_name("orphan")) != std::string::npos);
  std::size_t dropped = 0;
  for (const auto& p : q.problems) dropped += p.starts_with("dropped the completion") ? 1 : 0;
  CHECK(dropped == 2);
  // The dropped completions can be sent again and are taken as new.
  CHECK_FALSE(q.queue.put(textless, large("textless text")).duplicate);
  CHECK_FALSE(q.queue.put(tampered, large("tampered text")).duplicate);
  CHECK(q.queue.open_text(q.queue.put(tampered, large("tampered text")).held).view() == large("tampered text"));
}

TEST_CASE("a put in the journal and its tombstone in done/: the tombstone wins") {
  temp_dir tmp;
  const fs::path dir = tmp.path() / "queue";
  const completion c = make_completion("p", "c");
  const completion kept = make_completion("p", "kept");
  const fs::path segment = dir / "journal" / "0000000000000001.log";
  std::string before_consume;
  {
    opened_queue q(dir);
    const auto held = q.queue.put(c, "text").held;
    q.queue.put(kept, "kept text");
    before_consume = read_file(segment);
    CHECK(q.queue.consume({held.seq}).empty());
  }
  // A journal that lost the retire entry (as if its segment went) while done/ kept the tombstone.
  write_file(segment, before_consume, 0600);
  {
    opened_queue q(dir);
    INFO(joined(q.problems));
    REQUIRE(q.state.results.size() == 1);
    CHECK(q.state.results[0].info.child_id == "kept");
    CHECK(joined(q.problems).find("already delivered") != std::string::npos);
    CHECK(q.queue.put(c, "text").delivered);
  }
  {
    // And the other way round: a retire entry whose tombstone file went is indexed again.
    opened_queue q(dir);
    CHECK(q.queue.consume({q.state.results[0].seq}).empty());
  }
  fs::remove(dir / "done" / key_of("p", "kept"));
  opened_queue q(dir);
  INFO(joined(q.problems));
  CHECK(q.state.results.empty());
  CHECK(area(dir, "done") == sorted({key_of("p", "c"), key_of("p", "kept")}));
  CHECK(q.queue.put(c, "text").delivered);
  CHECK(q.queue.put(kept, "kept text").delivered);
}

TEST_CASE("misuse: put before recover, recover twice, an empty delivery id") {
  temp_dir tmp;
  pending_queue q(tmp.path() / "queue");
  CHECK_THROWS_AS(q.put(make_completion("p", "c"), "t"), std::logic_error);
  CHECK_THROWS_AS(q.begin_delivery({"p", "d", {1}, "x"}), std::logic_error);
  CHECK_THROWS_AS(q.consume({1}), std::logic_error);
  q.recover();
  CHECK_THROWS_AS(q.recover(), std::logic_error);
  CHECK_THROWS_AS(q.begin_delivery({"p", "", {1}, "x"}), std::invalid_argument);
  CHECK(q.statistics().deliveries == 0);
}

// Found by this test: put_async moved its callback into make_put; when make_put refused the
// completion, the moved-from callback was called and std::bad_function_call escaped.
TEST_CASE("misuse: a completion that is not valid UTF-8 is refused and writes nothing") {
  temp_dir tmp;
  const fs::path dir = tmp.path() / "queue";
  opened_queue q(dir, small_files);
  const std::size_t journal_bytes = q.queue.statistics().journal_bytes;
  for (int field = 0; field < 3; ++field) {
    completion bad = make_completion("p", "c");
    (field == 0 ? bad.title : field == 1 ? bad.child_id : bad.error) = "\xff\xfe not UTF-8";
    CHECK_THROWS_AS(q.queue.put(bad, large("t")), std::invalid_argument);
    bool called = false;
    q.queue.put_async(bad, "t", [&](std::exception_ptr error, pending_queue::put_outcome) {
      called = true;
      CHECK(error != nullptr);
    });
    CHECK(called);
  }
  CHECK(q.queue.statistics().results == 0);
  CHECK(q.queue.statistics().journal_bytes == journal_bytes);
  CHECK(area(dir, "texts").empty());
}

TEST_CASE("a queue directory, journal or segment that is a symlink or open to others is refused") {
  temp_dir tmp;
  const fs::path real = tmp.path() / "real";
  fs::create_directory(real);
  fs::permissions(real, fs::perms::owner_all, fs::perm_options::replace);
  fs::create_directory_symlink(real, tmp.path() / "link");
  CHECK_THROWS_WITH_AS(pending_queue{tmp.path() / "link"}, doctest::Contains("symlink"), std::runtime_error);
  fs::permissions(real, fs::perms::all, fs::perm_options::replace);
  CHECK_THROWS_WITH_AS(pending_queue{real}, doctest::Contains("chmod 700"), std::runtime_error);
  CHECK(names_in(real).empty());  // nothing was created in a directory that was refused
  fs::permissions(real, fs::perms::owner_all, fs::perm_options::replace);
  fs::create_directory(real / "journal");
  fs::permissions(real / "journal", fs::perms::all, fs::perm_options::replace);
  CHECK_THROWS_WITH_AS(pending_queue{real}, doctest::Contains("journal is mode 0777"), std::runtime_error);
  fs::permissions(real / "journal", fs::perms::owner_all, fs::perm_options::replace);
  { opened_queue q(real); q.queue.put(make_completion("p", "c"), "t"); }
  const fs::path segment = real / "journal" / "0000000000000001.log";
  fs::permissions(segment, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read,
                  fs::perm_options::replace);
  CHECK_THROWS_WITH_AS(pending_queue{real}, doctest::Contains("open to group or others"), std::runtime_error);
  CHECK(mode_of(segment) == 0640);  // refused, not repaired behind our back
  fs::rename(segment, tmp.path() / "elsewhere.log");
  fs::permissions(tmp.path() / "elsewhere.log", fs::perms::owner_read | fs::perms::owner_write, fs::perm_options::replace);
  fs::create_symlink(tmp.path() / "elsewhere.log", segment);
  CHECK_THROWS_WITH_AS(pending_queue{real}, doctest::Contains("symlink"), std::runtime_error);
}

TEST_CASE("concurrent puts get unique seqs and all survive a restart") {
  temp_dir tmp;
  const fs::path dir = tmp.path() / "queue";
  constexpr int threads = 4;
  constexpr int per_thread = 15;
  const auto text_of = [](int t, int i) { return i % 4 == 0 ? large(std::to_string(i % 3)) : "text " + std::to_string(t * 100 + i); };
  {
    opened_queue q(dir, small_files);
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back([&q, t, &text_of] {
        for (int i = 0; i < per_thread; ++i)
          q.queue.put(make_completion("p", std::to_string(t) + "-" + std::to_string(i)), text_of(t, i));
      });
    }
    for (auto& w : workers) w.join();
  }
  opened_queue q(dir, small_files);
  CHECK(q.problems.empty());
  REQUIRE(q.state.results.size() == threads * per_thread);
  std::set<std::uint64_t> seqs;
  for (const auto& r : q.state.results) {
    seqs.insert(r.seq);
    const auto dash = r.info.child_id.find('-');
    const int t = std::stoi(r.info.child_id.substr(0, dash));
    const int i = std::stoi(r.info.child_id.substr(dash + 1));
    CHECK(q.queue.open_text(r).view() == text_of(t, i));
  }
  CHECK(seqs.size() == threads * per_thread);
  CHECK(area(dir, "texts").size() == 3);
}

TEST_CASE_FIXTURE(full_disk_queue, "a full disk: put throws queue_error and leaves nothing half-written") {
  if (!small.usable()) return;
  const std::size_t journal_bytes = journal_end(segment);
  CHECK(size_of(segment) == journal_bytes);  // no zeros written ahead on a disk this short of space

  SUBCASE("a text file does not fit") {
    CHECK_THROWS_WITH_AS(q->queue.put(make_completion("p", "big"), std::string(512 * 1024, 'x')),
                         doctest::Contains("No space left on device"), queue_error);
  }
  SUBCASE("an inline text does not fit in the journal") {
    const fs::path filler = fill_space(small.at);
    CHECK_THROWS_WITH_AS(q->queue.put(make_completion("p", "inline"), std::string(12 * 1024, 'i')),
                         doctest::Contains("No space left on device"), queue_error);
    fs::remove(filler);
  }
  CHECK(journal_end(segment) == journal_bytes);
  CHECK(area(dir, "journal") == std::vector<std::string>{"0000000000000001.log"});
  CHECK(area(dir, "texts") == std::vector<std::string>{text_name(fits)});
  CHECK(area(dir, "done").empty());
  CHECK(q->queue.statistics().results == 1);
  goes_on_after_full_disk(q, dir, options, {fits});
}

TEST_CASE_FIXTURE(full_disk_queue,
                  "a full disk: with no inode left, the file opened ahead takes one text and the next is refused") {
  if (!small.usable()) return;
  const std::string taken(17 * 1024, 't');
  REQUIRE(unnamed_files_after(dir / "texts", {}).size() == 1);  // the writer's spare, opened after

  const std::vector<fs::path> fillers = take_all_inodes(small.at);
  REQUIRE_FALSE(fillers.empty());
  // The spare holds its inode: the next text needs no new one.
  q->queue.put(make_completion("p", "spare"), taken);
  const std::size_t journal_bytes = journal_end(segment);
  CHECK_THROWS_WITH_AS(q->queue.put(make_completion("p", "second"), std::string(17 * 1024, 's')),
                       doctest::Contains("No space left on device"), queue_error);
  for (const auto& f : fillers) fs::remove(f);
  CHECK(journal_end(segment) == journal_bytes);
  CHECK(area(dir, "texts") == sorted({text_name(fits), text_name(taken)}));
  CHECK(q->queue.statistics().results == 2);
  goes_on_after_full_disk(q, dir, options, {fits, taken});
}

TEST_CASE("a full disk: a retirement the journal refuses stays held and comes back after a restart") {
  small_disk small("size=64k,nr_inodes=64");
  if (!small.usable()) return;
  const fs::path& dir = small.queue;
  std::vector<held_result> held;
  std::optional<opened_queue> q(std::in_place, dir);
  held.push_back(q->queue.put(make_completion("p", "before"), "tbefore").held);  // the journal has a page
  const fs::path filler = fill_space(small.at);
  // Small puts until the journal's last page is full: what is left cannot take much more.
  for (int i = 0; i < 100; ++i) {
    try {
      held.push_back(q->queue.put(make_completion("p", std::to_string(i)), "t" + std::to_string(i)).held);
    } catch (const queue_error& e) {
      CHECK(std::string(e.what()).find("No space left on device") != std::string::npos);
      break;
    }
  }
  REQUIRE(held.size() >= 1);
  REQUIRE(held.size() < 100);
  std::optional<held_result> refused;
  std::vector<std::uint64_t> retired;
  for (const held_result& h : held) {
    const auto problems = q->queue.consume({h.seq});
    if (!problems.empty()) {
      INFO(joined(problems));
      CHECK(problems.size() == 1);
      CHECK(problems[0].find("delivered again after a restart") != std::string::npos);
      refused = h;
      break;
    }
    retired.push_back(h.seq);
  }
  REQUIRE(refused.has_value());
  // Meanwhile it is gone from memory and a resend is recognised.
  CHECK(q->queue.put(refused->info, "t" + refused->info.child_id).delivered);
  CHECK(q->queue.statistics().results == held.size() - retired.size() - 1);
  CHECK(q->queue.was_delivered("p", refused->info.child_id));
  q.reset();
  fs::remove(filler);

  opened_queue again(dir);
  INFO(joined(again.problems));
  std::set<std::uint64_t> back;
  for (const auto& r : again.state.results) back.insert(r.seq);
  CHECK(back.contains(refused->seq));  // at least once: never lost
  for (const std::uint64_t seq : retired) CHECK_FALSE(back.contains(seq));
  CHECK(back.size() == held.size() - retired.size());
  for (const auto& r : again.state.results) CHECK(again.queue.open_text(r).view() == "t" + r.info.child_id);
}
