// The durable queue (docs/design.md §8) on real directories: what put() acknowledged survives a
// restart (a new pending_queue on the same directory), leaves only when delivered or consumed,
// and a crash's leftovers are cleaned up on recovery.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "engine/pending_queue.hpp"
#include "engine/sha256.hpp"
#include "support/fs_fixtures.hpp"

namespace fs = std::filesystem;
using namespace handoff;
using namespace handoff::test;

namespace {

completion make_completion(const std::string& parent, const std::string& child,
                           result_status status = result_status::done) {
  return {parent, child, "title of " + child, status,
          status == result_status::error ? "it broke" : ""};
}

// A queue on `dir` that has recovered; the problems it reported are kept.
struct opened {
  explicit opened(const fs::path& dir) : queue(dir), state(queue.recover(&problems)) {}
  std::vector<std::string> problems;
  pending_queue queue;
  pending_queue::recovered state;
};

std::string problems_text(const std::vector<std::string>& problems) {
  std::string all;
  for (const auto& p : problems) all += p + "\n";
  return all;
}

std::string record_name(const completion& c) {
  std::string key_input = c.parent_id;
  key_input.push_back('\0');
  key_input += c.child_id;
  return sha256_hex(key_input) + ".json";
}

void check_same(const held_result& a, const held_result& b) {
  CHECK(a.seq == b.seq);
  CHECK(a.info.parent_id == b.info.parent_id);
  CHECK(a.info.child_id == b.info.child_id);
  CHECK(a.info.title == b.info.title);
  CHECK(a.info.status == b.info.status);
  CHECK(a.info.error == b.info.error);
  CHECK(a.sha256 == b.sha256);
  CHECK(a.shape.bytes == b.shape.bytes);
  CHECK(a.shape.lines == b.shape.lines);
  CHECK(a.completed_unix_ms == b.completed_unix_ms);
}

// Entries of one queue area that are not temp files.
std::vector<std::string> area(const fs::path& queue_dir, const char* name) {
  return names_in(queue_dir / name);
}

}  // namespace

TEST_CASE("held results survive a restart, in completion order, with their exact texts") {
  temp_dir tmp;
  const fs::path dir = tmp.path() / "queue";
  const std::vector<std::string> texts = {"first report\nverdict: ok", "second\n",
                                          "first report\nverdict: ok",  // shared with the first
                                          "结论：失败 ❌\n"};
  std::vector<held_result> put;
  {
    opened q(dir);
    CHECK(q.state.results.empty());
    CHECK(q.problems.empty());
    for (std::size_t i = 0; i < texts.size(); ++i) {
      const auto status = i == 3 ? result_status::error : result_status::done;
      const auto outcome =
          q.queue.put(make_completion("parent-" + std::to_string(i % 2),
                                      "child-" + std::to_string(i), status),
                      texts[i]);
      CHECK_FALSE(outcome.duplicate);
      CHECK(outcome.held.sha256 == sha256_hex(texts[i]));
      put.push_back(outcome.held);
    }
    CHECK(put[0].seq < put[1].seq);
    CHECK(put[1].seq < put[2].seq);
    CHECK(put[2].seq < put[3].seq);
  }
  opened again(dir);
  INFO(problems_text(again.problems));
  CHECK(again.problems.empty());
  REQUIRE(again.state.results.size() == put.size());
  for (std::size_t i = 0; i < put.size(); ++i) {
    check_same(again.state.results[i], put[i]);
    CHECK(again.queue.open_text(again.state.results[i]).view() == texts[i]);
  }
  CHECK(area(dir, "texts").size() == 3);  // equal texts are stored once
  CHECK(area(dir, "records").size() == 4);
  const auto stats = again.queue.statistics();
  CHECK(stats.results == 4);
  CHECK(stats.text_bytes == texts[0].size() + texts[1].size() + texts[3].size());

  // Seqs continue after the highest one recovered.
  const auto next = again.queue.put(make_completion("parent-9", "child-9"), "later");
  CHECK(next.held.seq == put.back().seq + 1);
}

TEST_CASE("queue files are private: 0700 directories, 0600 files, no client string in a name") {
  temp_dir tmp;
  umask_guard loose(0);
  const fs::path dir = tmp.path() / "queue";
  opened q(dir);
  const completion c = make_completion("../../etc", "passwd");
  const auto held = q.queue.put(c, "text").held;
  q.queue.begin_delivery({"../../etc", "../delivery", {held.seq}, "{}"});
  CHECK(mode_of(dir) == 0700);
  for (const char* sub : {"texts", "records", "deliveries", "done"}) {
    INFO(sub);
    CHECK(mode_of(dir / sub) == 0700);
    for (const auto& name : area(dir, sub)) {
      CHECK(mode_of(dir / sub / name) == 0600);
      CHECK(name.find("etc") == std::string::npos);
      CHECK(name.find("delivery") == std::string::npos);
    }
  }
  CHECK(area(dir, "records") == std::vector<std::string>{record_name(c)});
  CHECK(names_in(dir) == std::vector<std::string>{"deliveries", "done", "records", "texts"});
  CHECK_FALSE(q.queue.text_file(held).has_value());  // a short text is kept in the journal
}

TEST_CASE("a resend is idempotent, and another text for the same child is a conflict") {
  temp_dir tmp;
  const fs::path dir = tmp.path() / "queue";
  const completion c = make_completion("p", "c");
  std::uint64_t seq = 0;
  {
    opened q(dir);
    seq = q.queue.put(c, "the answer").held.seq;
    const auto again = q.queue.put(c, "the answer");
    CHECK(again.duplicate);
    CHECK_FALSE(again.delivered);
    CHECK(again.held.seq == seq);
    CHECK_THROWS_AS(q.queue.put(c, "another answer"), queue_conflict);
    CHECK(q.queue.statistics().results == 1);
  }
  opened q(dir);
  const auto after_restart = q.queue.put(c, "the answer");
  CHECK(after_restart.duplicate);
  CHECK(after_restart.held.seq == seq);
  CHECK_THROWS_AS(q.queue.put(c, "another answer"), queue_conflict);
  // The same child id under another parent is another completion.
  CHECK_FALSE(q.queue.put(make_completion("other parent", "c"), "the answer").duplicate);
  CHECK(area(dir, "records").size() == 2);
  CHECK(area(dir, "texts").size() == 1);
}

TEST_CASE("a consumed result is gone after restart and its resend is a duplicate until expiry") {
  temp_dir tmp;
  const fs::path dir = tmp.path() / "queue";
  const completion a = make_completion("p", "a");
  const completion b = make_completion("p", "b");
  std::uint64_t seq_a = 0;
  {
    opened q(dir);
    seq_a = q.queue.put(a, "text of a").held.seq;
    q.queue.put(b, "text of b");
    CHECK(q.queue.consume({seq_a, 999}).empty());  // unknown seqs are ignored
    CHECK(q.queue.statistics().results == 1);
    CHECK(q.queue.statistics().tombstones == 1);
  }
  opened q(dir);
  CHECK(q.problems.empty());
  REQUIRE(q.state.results.size() == 1);
  CHECK(q.state.results[0].info.child_id == "b");
  CHECK(area(dir, "texts") == std::vector<std::string>{sha256_hex("text of b") + ".txt"});

  const auto resend = q.queue.put(a, "text of a");
  CHECK(resend.duplicate);
  CHECK(resend.delivered);
  CHECK(resend.held.seq == seq_a);
  CHECK(q.queue.statistics().results == 1);  // nothing new is held
  CHECK_THROWS_AS(q.queue.put(a, "a different text of a"), queue_conflict);

  CHECK(q.queue.expire_tombstones(std::chrono::hours(1)) == 0);  // too young
  CHECK(q.queue.expire_tombstones(std::chrono::seconds(0)) == 1);
  CHECK(area(dir, "done").empty());
  const auto fresh = q.queue.put(a, "text of a");
  CHECK_FALSE(fresh.duplicate);
  CHECK(fresh.held.seq > seq_a);
}

TEST_CASE("seqs stay increasing across restarts even when everything was consumed") {
  temp_dir tmp;
  const fs::path dir = tmp.path() / "queue";
  std::uint64_t last = 0;
  {
    opened q(dir);
    for (int i = 0; i < 3; ++i) {
      last = q.queue.put(make_completion("p", std::to_string(i)), "t").held.seq;
    }
    q.queue.consume({1, 2, 3});
  }
  opened q(dir);
  CHECK(q.state.results.empty());
  CHECK(q.queue.put(make_completion("p", "new"), "t").held.seq == last + 1);
}

TEST_CASE("deliveries survive a restart with their exact payload until acknowledged") {
  temp_dir tmp;
  const fs::path dir = tmp.path() / "queue";
  const std::string payload =
      R"({"parentId":"p","deliveryId":"d1","text":"Subagent a \"A\" finished.\n\nline ✓"})";
  std::vector<std::uint64_t> seqs;
  {
    opened q(dir);
    for (const char* child : {"a", "b", "c"}) {
      seqs.push_back(q.queue.put(make_completion("p", child), std::string("text ") + child)
                         .held.seq);
    }
    q.queue.begin_delivery({"p", "d1", {seqs[0], seqs[1]}, payload});
  }
  {
    opened q(dir);
    REQUIRE(q.state.deliveries.size() == 1);
    const stored_delivery& d = q.state.deliveries[0];
    CHECK(d.parent_id == "p");
    CHECK(d.delivery_id == "d1");
    CHECK(d.seqs == std::vector<std::uint64_t>{seqs[0], seqs[1]});
    CHECK(d.payload == payload);
    CHECK(q.queue.statistics().deliveries == 1);

    CHECK(q.queue.complete_delivery("d1").empty());
    CHECK(q.queue.complete_delivery("d1").empty());  // a repeated acknowledgement is harmless
    CHECK(q.queue.statistics().deliveries == 0);
  }
  opened q(dir);
  CHECK(q.state.deliveries.empty());
  REQUIRE(q.state.results.size() == 1);
  CHECK(q.state.results[0].seq == seqs[2]);
  CHECK(q.queue.put(make_completion("p", "a"), "text a").duplicate);
  CHECK(area(dir, "deliveries").empty());
}

TEST_CASE("a delivery keeps the results still held and goes when none is left") {
  temp_dir tmp;
  const fs::path dir = tmp.path() / "queue";
  std::uint64_t a = 0;
  std::uint64_t b = 0;
  {
    opened q(dir);
    a = q.queue.put(make_completion("p", "a"), "ta").held.seq;
    b = q.queue.put(make_completion("p", "b"), "tb").held.seq;
    q.queue.begin_delivery({"p", "d1", {a, b}, "payload"});
    q.queue.consume({a});  // a wait took it while the delivery was unacknowledged
  }
  {
    opened q(dir);
    REQUIRE(q.state.deliveries.size() == 1);
    CHECK(q.state.deliveries[0].seqs == std::vector<std::uint64_t>{b});
    CHECK(q.state.deliveries[0].payload == "payload");
    q.queue.consume({b});
  }
  opened q(dir);
  CHECK(q.state.deliveries.empty());
  CHECK(area(dir, "deliveries").empty());
  CHECK(problems_text(q.problems).find("none of its results is held") != std::string::npos);
}

TEST_CASE("recovery removes temp files, garbage records and records whose text is wrong") {
  temp_dir tmp;
  const fs::path dir = tmp.path() / "queue";
  const completion good = make_completion("p", "good");
  const completion truncated = make_completion("p", "truncated");
  const completion textless = make_completion("p", "textless");
  const completion tampered = make_completion("p", "tampered");
  {
    opened q(dir);
    q.queue.put(good, "good text");
    q.queue.put(truncated, "truncated text");
    q.queue.put(textless, "textless text");
    q.queue.put(tampered, "tampered text");
  }
  // What a crash, a full disk or a stray editor can leave:
  write_file(dir / "records" / ".tmp-0123456789abcdef", "{\"half", 0600);
  write_file(dir / "texts" / ".tmp-fedcba9876543210", "half a text", 0600);
  write_file(dir / "records" / (std::string(64, 'a') + ".json"), "{not json at all", 0600);
  const std::string record = read_file(dir / "records" / record_name(truncated));
  write_file(dir / "records" / record_name(truncated), record.substr(0, record.size() / 2),
             0600);
  fs::remove(dir / "texts" / (sha256_hex("textless text") + ".txt"));
  write_file(dir / "texts" / (sha256_hex("tampered text") + ".txt"), "tampered TEXT", 0600);
  write_file(dir / "texts" / (sha256_hex("orphan") + ".txt"), "orphan", 0600);
  write_file(dir / "done" / std::string(64, 'b'), "[]", 0600);
  write_file(dir / "deliveries" / (sha256_hex("dx") + ".json"), "", 0600);

  opened q(dir);
  const std::string problems = problems_text(q.problems);
  INFO(problems);
  REQUIRE(q.state.results.size() == 1);
  CHECK(q.state.results[0].info.child_id == "good");
  CHECK(q.queue.open_text(q.state.results[0]).view() == "good text");
  CHECK(q.state.deliveries.empty());
  CHECK(q.queue.statistics().tombstones == 0);
  CHECK(area(dir, "records") == std::vector<std::string>{record_name(good)});
  CHECK(area(dir, "texts") == std::vector<std::string>{sha256_hex("good text") + ".txt"});
  CHECK(area(dir, "done").empty());
  CHECK(area(dir, "deliveries").empty());
  // Two temps, three garbage files, a missing and a tampered text (the record and the text),
  // and two unused texts: the orphan and the truncated record's.
  CHECK(q.problems.size() == 11);
  for (const char* expected :
       {"records/.tmp-0123456789abcdef", "texts/.tmp-fedcba9876543210", "not valid JSON",
        "is missing", "does not match its hash", "no record uses it", "done/bbbb"}) {
    CHECK(problems.find(expected) != std::string::npos);
  }
  // The dropped completions can be sent again and are taken as new.
  CHECK_FALSE(q.queue.put(textless, "textless text").duplicate);
  CHECK_FALSE(q.queue.put(truncated, "truncated text").duplicate);
}

TEST_CASE("a record and its tombstone both on disk: the tombstone wins") {
  temp_dir tmp;
  const fs::path dir = tmp.path() / "queue";
  const completion c = make_completion("p", "c");
  std::string record;
  {
    opened q(dir);
    const auto held = q.queue.put(c, "text").held;
    record = read_file(dir / "records" / record_name(c));
    q.queue.consume({held.seq});
  }
  // A crash after the tombstone was written and before the record was removed.
  write_file(dir / "records" / record_name(c), record, 0600);
  opened q(dir);
  CHECK(q.state.results.empty());
  CHECK(area(dir, "records").empty());
  CHECK(q.queue.put(c, "text").delivered);
}

TEST_CASE("misuse: put before recover, recover twice, invalid UTF-8") {
  temp_dir tmp;
  pending_queue q(tmp.path() / "queue");
  CHECK_THROWS_AS(q.put(make_completion("p", "c"), "t"), std::logic_error);
  CHECK_THROWS_AS(q.begin_delivery({"p", "d", {1}, "x"}), std::logic_error);
  q.recover();
  CHECK_THROWS_AS(q.recover(), std::logic_error);
  completion bad = make_completion("p", "c");
  bad.title = "\xff\xfe not UTF-8";
  CHECK_THROWS_AS(q.put(bad, "t"), std::invalid_argument);
  CHECK(area(q.dir(), "records").empty());
  CHECK(area(q.dir(), "texts").empty());
  CHECK_THROWS_AS(q.begin_delivery({"p", "", {1}, "x"}), std::invalid_argument);
}

TEST_CASE("a queue directory that is a symlink or open to others is refused") {
  temp_dir tmp;
  const fs::path real = tmp.path() / "real";
  fs::create_directory(real);
  fs::permissions(real, fs::perms::owner_all, fs::perm_options::replace);
  fs::create_directory_symlink(real, tmp.path() / "link");
  CHECK_THROWS_WITH_AS(pending_queue{tmp.path() / "link"}, doctest::Contains("symlink"),
                       std::runtime_error);
  fs::permissions(real, fs::perms::all, fs::perm_options::replace);
  CHECK_THROWS_WITH_AS(pending_queue{real}, doctest::Contains("chmod 700"), std::runtime_error);
  CHECK(names_in(real).empty());  // nothing was created in a directory that was refused
  fs::permissions(real, fs::perms::owner_all, fs::perm_options::replace);
  fs::create_directory(real / "records");
  fs::permissions(real / "records", fs::perms::all, fs::perm_options::replace);
  CHECK_THROWS_WITH_AS(pending_queue{real}, doctest::Contains("records is mode 0777"),
                       std::runtime_error);
}

TEST_CASE("concurrent puts get unique seqs and all survive a restart") {
  temp_dir tmp;
  const fs::path dir = tmp.path() / "queue";
  constexpr int threads = 4;
  constexpr int per_thread = 15;
  {
    opened q(dir);
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back([&q, t] {
        for (int i = 0; i < per_thread; ++i) {
          const std::string child = std::to_string(t) + "-" + std::to_string(i);
          q.queue.put(make_completion("p", child), "text " + std::to_string(i % 3));
        }
      });
    }
    for (auto& w : workers) w.join();
  }
  opened q(dir);
  REQUIRE(q.state.results.size() == threads * per_thread);
  std::set<std::uint64_t> seqs;
  for (const auto& r : q.state.results) seqs.insert(r.seq);
  CHECK(seqs.size() == threads * per_thread);
  CHECK(area(dir, "texts").size() == 3);
}

TEST_CASE("a full disk: put throws queue_error and leaves nothing half-written") {
  temp_dir tmp;
  const fs::path mount_point = tmp.path() / "small";
  fs::create_directory(mount_point);
  // 64 KiB of data and at most 64 inodes, so both can run out in a test.
  tmpfs_mount small(mount_point, "size=64k,nr_inodes=64");
  if (!small.mounted()) {
    MESSAGE("skipped: cannot mount a tmpfs here (", small.why_not(), ")");
    return;
  }
  const fs::path dir = mount_point / "queue";
  opened q(dir);
  const completion first = make_completion("p", "first");
  q.queue.put(first, "fits\n");

  SUBCASE("the text does not fit") {
    CHECK_THROWS_WITH_AS(q.queue.put(make_completion("p", "big"), std::string(512 * 1024, 'x')),
                         doctest::Contains("No space left on device"), queue_error);
  }
  SUBCASE("the text fits, its record does not (no inode left for it)") {
    // Take every free inode, then give one back: enough for the text, none for the record.
    std::vector<fs::path> fillers;
    const auto take_all_inodes = [&] {
      for (;;) {
        const fs::path f = mount_point / ("filler-" + std::to_string(fillers.size()));
        const int fd = ::open(f.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
        if (fd < 0) return;
        ::close(fd);
        fillers.push_back(f);
      }
    };
    take_all_inodes();
    REQUIRE_FALSE(fillers.empty());
    fs::remove(fillers.back());
    fillers.pop_back();
    CHECK_THROWS_WITH_AS(q.queue.put(make_completion("p", "second"), "second text"),
                         doctest::Contains("No space left on device"), queue_error);
    CHECK(area(dir, "texts") == std::vector<std::string>{sha256_hex("fits\n") + ".txt"});

    // A result cannot leave either: consume reports it and keeps it on disk for next time.
    take_all_inodes();  // the failed put gave its text's inode back
    const auto failures = q.queue.consume({1});
    REQUIRE(failures.size() == 1);
    CHECK(failures[0].find("delivered again after a restart") != std::string::npos);
    CHECK(q.queue.put(first, "fits\n").delivered);
    for (const auto& f : fillers) fs::remove(f);
  }
  CHECK(area(dir, "records") == std::vector<std::string>{record_name(first)});
  CHECK(area(dir, "texts") == std::vector<std::string>{sha256_hex("fits\n") + ".txt"});
  CHECK(area(dir, "done").empty());
  CHECK(q.queue.statistics().results <= 1);

  opened again(dir);
  INFO(problems_text(again.problems));
  CHECK(again.problems.empty());
  REQUIRE(again.state.results.size() == 1);
  CHECK(again.state.results[0].info.child_id == "first");
}
