// The queue's in-memory index (engine/queue/queue_index.hpp): held results by key and seq, the
// texts they use, the deliveries, and the per-segment counts that decide when a journal segment
// may go. No disk: what the writer and recovery do to it, step by step.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "engine/queue/queue_index.hpp"

using namespace handoff;

namespace {

// A held result `seq` under `key`, its text `sha` of `bytes` bytes, its entry in `segment`.
queue_index::entry indexed(std::uint64_t seq, const std::string& sha, std::size_t bytes, std::uint64_t segment,
                           text_place place = text_place::in_journal) {
  held_result h;
  h.seq = seq;
  h.info.parent_id = "p";
  h.info.child_id = "c" + std::to_string(seq);
  h.sha256 = sha;
  h.shape.bytes = bytes;
  return {h, {segment, 100 * seq, place}};
}

stored_delivery sent(const std::string& id, std::vector<std::uint64_t> seqs) { return {"p", id, std::move(seqs), "{}"}; }

}  // namespace

TEST_CASE("queue_index holds results by key and by seq, and counts a shared text once") {
  queue_index ix;
  ix.hold("k1", indexed(1, "aa", 10, 1));
  ix.hold("k2", indexed(2, "aa", 10, 1));
  ix.hold("k3", indexed(3, "bb", 7, 2, text_place::in_file));

  CHECK(ix.results() == 3);
  REQUIRE(ix.find(std::string("k2")) != nullptr);
  CHECK(ix.find(std::string("k2"))->held.seq == 2);
  REQUIRE(ix.find(std::uint64_t{3}) != nullptr);
  CHECK(ix.find(std::uint64_t{3})->held.sha256 == "bb");
  CHECK(*ix.key_of(1) == "k1");
  CHECK(ix.key_of(4) == nullptr);
  CHECK(ix.find(std::string("k4")) == nullptr);
  CHECK(ix.text_bytes() == 17);  // "aa" once
  CHECK(ix.uses_text("aa"));
  CHECK(ix.file_texts() == std::vector<std::string>{"bb"});
  CHECK(ix.live(1) == 2);
  CHECK(ix.live(2) == 1);

  const std::vector<held_result> in_order = ix.results_by_seq();
  REQUIRE(in_order.size() == 3);
  CHECK(in_order[0].seq == 1);
  CHECK(in_order[1].seq == 2);
  CHECK(in_order[2].seq == 3);
}

TEST_CASE("queue_index release lets go at once and keeps the segment until the retirement is written") {
  queue_index ix;
  ix.hold("k1", indexed(1, "aa", 10, 1));
  ix.hold("k2", indexed(2, "aa", 10, 1));

  const auto r = ix.release(1);
  REQUIRE(r.has_value());
  CHECK(r->key == "k1");
  CHECK(r->e.where.segment == 1);
  CHECK_FALSE(ix.holds("k1"));
  CHECK(ix.find(std::uint64_t{1}) == nullptr);
  CHECK_FALSE(ix.release(1).has_value());  // nothing is consumed twice
  CHECK(ix.live(1) == 2);                  // its retire entry is not on disk yet
  CHECK_FALSE(ix.forget_segment(1));

  ix.left(1);
  CHECK(ix.live(1) == 1);
  CHECK_FALSE(ix.drop_text_use("aa"));  // k2 still uses it
  CHECK(ix.uses_text("aa"));

  ix.drop(2);  // recovery's way: released and settled at once
  CHECK(ix.results() == 0);
  CHECK(ix.live(1) == 0);
  CHECK_FALSE(ix.uses_text("aa"));
  CHECK(ix.text_bytes() == 0);
  CHECK(ix.forget_segment(1));
}

TEST_CASE("queue_index a refused retirement keeps its segment for good") {
  queue_index ix;
  ix.hold("k1", indexed(1, "aa", 10, 1));
  REQUIRE(ix.release(1).has_value());
  ix.refused(1);
  CHECK(ix.stuck(1) == 1);
  CHECK_FALSE(ix.forget_segment(1));
  ix.left(1);  // even with nothing live left in it
  CHECK(ix.live(1) == 0);
  CHECK_FALSE(ix.forget_segment(1));
}

TEST_CASE("queue_index holding a key again replaces the older entry and moves its counts") {
  queue_index ix;
  ix.hold("k1", indexed(1, "aa", 10, 1));
  ix.hold("k1", indexed(1, "aa", 10, 3));  // a copy moved forward, replayed after the original
  CHECK(ix.results() == 1);
  CHECK(ix.live(1) == 0);
  CHECK(ix.live(3) == 1);
  CHECK(ix.text_bytes() == 10);
  CHECK(ix.find(std::uint64_t{1})->where.segment == 3);

  ix.hold("k1", indexed(5, "cc", 4, 3));  // a migrated record under the same key, another seq
  CHECK(ix.key_of(1) == nullptr);
  CHECK(*ix.key_of(5) == "k1");
  CHECK_FALSE(ix.uses_text("aa"));
  CHECK(ix.text_bytes() == 4);
  CHECK(ix.live(3) == 1);
}

TEST_CASE("queue_index move follows a copy forward unless the result left meanwhile") {
  queue_index ix;
  ix.hold("k1", indexed(1, "aa", 10, 1));
  ix.hold("k2", indexed(2, "bb", 10, 1));
  CHECK(ix.move("k1", 1, 4, 999));
  CHECK(ix.find(std::uint64_t{1})->where.segment == 4);
  CHECK(ix.find(std::uint64_t{1})->where.text_offset == 999);
  CHECK(ix.live(1) == 1);
  CHECK(ix.live(4) == 1);

  REQUIRE(ix.release(2).has_value());  // retired while being copied: counts against segment 1
  CHECK_FALSE(ix.move("k2", 2, 4, 0));
  CHECK_FALSE(ix.move("k1", 7, 5, 0));  // another seq under that key: not the one copied
  CHECK(ix.live(1) == 1);
  CHECK(ix.live(4) == 1);
  ix.left(1);
  CHECK(ix.forget_segment(1));
}

TEST_CASE("queue_index deliveries: counted where sent, ended, moved, pruned of results no longer held") {
  queue_index ix;
  ix.hold("k1", indexed(1, "aa", 10, 1));
  ix.hold("k2", indexed(2, "bb", 10, 1));
  ix.add_delivery(sent("d1", {1, 2}), 1);
  ix.add_delivery(sent("d2", {2}), 2);
  CHECK(ix.deliveries() == 2);
  CHECK(ix.live(1) == 3);
  REQUIRE(ix.delivery("d1") != nullptr);
  CHECK(ix.delivery("d1")->seqs == std::vector<std::uint64_t>{1, 2});

  ix.add_delivery(sent("d2", {2}), 3);  // sent again (or copied forward): the later one counts
  CHECK(ix.deliveries() == 2);
  CHECK(ix.live(2) == 0);
  CHECK(ix.live(3) == 1);

  CHECK(ix.move_delivery("d2", 4));
  CHECK(ix.live(3) == 0);
  CHECK(ix.live(4) == 1);
  CHECK_FALSE(ix.move_delivery("nope", 4));

  const auto ended = ix.end_delivery("d1");
  REQUIRE(ended.has_value());
  CHECK(*ended == 1);
  CHECK(ix.delivery("d1") == nullptr);
  CHECK(ix.live(1) == 3);  // until its acknowledgement is written
  CHECK_FALSE(ix.end_delivery("d1").has_value());
  ix.left(*ended);

  ix.add_delivery(sent("d3", {1, 9}), 4);
  ix.drop(2);
  ix.prune_deliveries();
  CHECK(ix.delivery("d2") == nullptr);  // it carried only seq 2
  REQUIRE(ix.delivery("d3") != nullptr);
  CHECK(ix.delivery("d3")->seqs == std::vector<std::uint64_t>{1});
  CHECK(ix.live(4) == 1);
  const std::vector<stored_delivery> left = ix.deliveries_in_order();
  REQUIRE(left.size() == 1);
  CHECK(left[0].delivery_id == "d3");
}
