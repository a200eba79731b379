// The ledger on its own (daemon/ledger/ledger.hpp): every transition of a child, every one the ledger
// refuses or ignores, reservations and their hand-back, waits, and forgetting on a manual clock.
#include <doctest/doctest.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "ledger/ledger.hpp"

using namespace handoff;
using namespace handoff::daemon;
using namespace std::chrono_literals;

namespace {

constexpr auto grace = 1000ms;

// A clock the test moves by hand.
struct fixture {
  ledger_clock::time_point now = ledger_clock::time_point{} + 24h;
  ledger book{grace, [this] { return now; }};
  std::uint64_t next_seq = 1;

  pending_queue::put_outcome put(const std::string& parent_id, const std::string& child_id) {
    pending_queue::put_outcome o;
    o.held = held_result{next_seq++, completion{parent_id, child_id, "title " + child_id, result_status::done, ""},
                         std::string(64, 'a'), text_shape{100, 3}, 0};
    return o;
  }
  completion_effect complete(const std::string& parent_id, const std::string& child_id) {
    return book.complete(put(parent_id, child_id));
  }
  child_state state(const std::string& parent_id, const std::string& child_id) const {
    const child* c = book.find_child(parent_id, child_id);
    REQUIRE(c != nullptr);
    return c->state;
  }
  stored_delivery delivery(const reservation& r, const std::string& id) const {
    return stored_delivery{r.parent_id(), id, r.seqs(), "{}"};
  }
};

}  // namespace

TEST_CASE("start: unknown -> running, a second start keeps the state and the first title") {
  fixture f;
  CHECK(f.book.start("p", "c", "first") == child_state::running);
  CHECK(f.book.start("p", "c", "second") == child_state::running);
  CHECK(f.book.find_child("p", "c")->title == "first");
  CHECK(f.complete("p", "c") == completion_effect::held);
  CHECK(f.book.start("p", "c", "") == child_state::completed);
  CHECK(f.book.find("nobody") == nullptr);
}

TEST_CASE("progress keeps only a preview's tail and makes the child known") {
  fixture f;
  f.book.progress("p", "c", std::string(10000, 'x'));
  const child* c = f.book.find_child("p", "c");
  REQUIRE(c != nullptr);
  CHECK(c->state == child_state::running);
  CHECK(c->progress.size() <= 4096);
}

TEST_CASE("complete: running -> completed, holding the result, a duplicate changes nothing") {
  fixture f;
  f.book.start("p", "c", "");
  auto first = f.put("p", "c");
  CHECK(f.book.complete(first) == completion_effect::held);
  const child* c = f.book.find_child("p", "c");
  CHECK(c->state == child_state::completed);
  REQUIRE(c->held);
  CHECK(c->held->seq == first.held.seq);
  CHECK(c->final_status == result_status::done);
  CHECK(c->final_bytes == 100);
  CHECK(c->title == "title c");
  // The same completion again (the queue says duplicate): nothing moves.
  auto again = first;
  again.duplicate = true;
  CHECK(f.book.complete(again) == completion_effect::unchanged);
  CHECK(f.book.find_child("p", "c")->held->seq == first.held.seq);
}

TEST_CASE("complete of a result the queue already delivered: running -> delivered, else unchanged") {
  fixture f;
  auto resend = f.put("p", "c");
  resend.duplicate = resend.delivered = true;
  CHECK(f.book.complete(resend) == completion_effect::already_delivered);
  CHECK(f.state("p", "c") == child_state::delivered);
  CHECK_FALSE(f.book.find_child("p", "c")->held);
  CHECK(f.book.complete(resend) == completion_effect::unchanged);
  CHECK(f.state("p", "c") == child_state::delivered);
}

TEST_CASE("complete of a cancelled child: consume it now, it stays cancelled") {
  fixture f;
  f.book.start("p", "c", "");
  auto out = f.book.cancel("p", {"c"});
  CHECK(out.cancelled == std::vector<std::string>{"c"});
  CHECK(out.consume.empty());
  CHECK(f.state("p", "c") == child_state::cancelled);
  CHECK(f.complete("p", "c") == completion_effect::consume_now);
  CHECK(f.state("p", "c") == child_state::cancelled);
  CHECK_FALSE(f.book.find_child("p", "c")->held);
}

TEST_CASE("complete on a child already held (completed or delivering) changes nothing") {
  fixture f;
  f.complete("p", "c");
  const auto seq = f.book.find_child("p", "c")->held->seq;
  CHECK(f.complete("p", "c") == completion_effect::unchanged);  // a new seq, not a duplicate
  CHECK(f.book.find_child("p", "c")->held->seq == seq);
  auto r = f.book.reserve("p", {"c"});
  f.book.begin_delivery(std::move(r), stored_delivery{"p", "d1", {seq}, "{}"});
  CHECK(f.complete("p", "c") == completion_effect::unchanged);
  CHECK(f.state("p", "c") == child_state::delivering);
}

TEST_CASE("complete of a delivered child whose tombstone expired (the queue held it anew): delivered -> completed") {
  fixture f;
  f.complete("p", "c");
  f.book.consume(f.book.reserve("p", {"c"}));
  REQUIRE(f.state("p", "c") == child_state::delivered);
  auto fresh = f.put("p", "c");  // neither duplicate nor delivered: a new record
  CHECK(f.book.complete(fresh) == completion_effect::held);
  CHECK(f.state("p", "c") == child_state::completed);
  CHECK(f.book.find_child("p", "c")->held->seq == fresh.held.seq);
}

TEST_CASE("reserve takes completed, unreserved children only, in completion order") {
  fixture f;
  f.complete("p", "late");  // seq 1
  f.complete("p", "early"); // seq 2
  f.book.start("p", "running", "");
  f.complete("p", "gone");
  auto consumed = f.book.reserve("p", {"gone"});
  f.book.consume(std::move(consumed));
  auto r = f.book.reserve("p", {"early", "late", "running", "gone", "unknown"});
  REQUIRE(r.held().size() == 2);
  CHECK(r.held()[0].info.child_id == "late");
  CHECK(r.held()[1].info.child_id == "early");
  CHECK(f.book.find_child("p", "late")->reserved);
  // Reserved ones are not taken twice.
  auto second = f.book.reserve("p", {"early", "late"});
  CHECK(second.empty());
  // An unknown parent gives an empty reservation.
  CHECK(f.book.reserve("nobody", {"x"}).empty());
}

TEST_CASE("a dropped reservation gives its children back and wakes the waits") {
  fixture f;
  f.complete("p", "a");
  f.complete("p", "b");
  int woken = 0;
  auto w = f.book.watch_children("p", {"x"}, [&] { ++woken; });
  {
    auto r = f.book.reserve("p", {"a", "b"});
    CHECK(f.book.find_child("p", "a")->reserved);
    auto moved = std::move(r);  // the moved-from handle gives nothing back
    CHECK(f.book.find_child("p", "a")->reserved);
    CHECK(r.empty());
  }
  CHECK_FALSE(f.book.find_child("p", "a")->reserved);
  CHECK_FALSE(f.book.find_child("p", "b")->reserved);
  CHECK(woken >= 1);
}

TEST_CASE("keep_only gives back the deferred results and keeps the admitted ones") {
  fixture f;
  f.complete("p", "a");
  f.complete("p", "b");
  auto r = f.book.reserve("p", {"a", "b"});
  const auto seq_a = f.book.find_child("p", "a")->held->seq;
  r.keep_only({seq_a});
  CHECK(r.held().size() == 1);
  CHECK(f.book.find_child("p", "a")->reserved);
  CHECK_FALSE(f.book.find_child("p", "b")->reserved);
  r.release();
  CHECK_FALSE(f.book.find_child("p", "a")->reserved);
}

TEST_CASE("begin delivery -> delivering and unacknowledged, acknowledge -> delivered") {
  fixture f;
  f.complete("p", "a");
  auto r = f.book.reserve_deliverable("p");
  const auto d = f.delivery(r, "dlv-1");
  f.book.begin_delivery(std::move(r), d);
  const child* a = f.book.find_child("p", "a");
  CHECK(a->state == child_state::delivering);
  CHECK(a->delivery_id == "dlv-1");
  CHECK_FALSE(a->reserved);
  REQUIRE(f.book.find("p")->unacked.size() == 1);
  // Nothing delivering can be reserved again or cancelled.
  CHECK(f.book.reserve("p", {"a"}).empty());
  f.book.cancel("p", {"a"});
  CHECK(f.state("p", "a") == child_state::delivering);
  // Acknowledge: an unknown id is refused, the right one settles the children once.
  CHECK_FALSE(f.book.acknowledge("p", "dlv-other"));
  CHECK_FALSE(f.book.acknowledge("nobody", "dlv-1"));
  CHECK(f.book.acknowledge("p", "dlv-1"));
  CHECK(f.state("p", "a") == child_state::delivered);
  CHECK_FALSE(f.book.find_child("p", "a")->held);
  CHECK(f.book.find("p")->unacked.empty());
  CHECK_FALSE(f.book.acknowledge("p", "dlv-1"));
}

TEST_CASE("consume: a wait's written reply delivers its reserved children") {
  fixture f;
  f.complete("p", "a");
  f.complete("p", "b");
  auto r = f.book.reserve("p", {"a"});
  const auto seqs = f.book.consume(std::move(r));
  CHECK(seqs.size() == 1);
  CHECK(f.state("p", "a") == child_state::delivered);
  CHECK(f.state("p", "b") == child_state::completed);
  // An empty reservation consumes nothing.
  CHECK(f.book.consume(reservation{}).empty());
}

TEST_CASE("cancel: running and free completed children go, reserved and delivering ones stay") {
  fixture f;
  f.book.start("p", "running", "");
  f.complete("p", "free");
  f.complete("p", "taken");
  auto r = f.book.reserve("p", {"taken"});
  const std::uint64_t free_seq = f.book.find_child("p", "free")->held->seq;
  const auto out = f.book.cancel("p", {"running", "free", "taken", "unknown"});
  CHECK(out.cancelled == std::vector<std::string>{"running", "free", "taken"});
  CHECK(out.consume == std::vector<std::uint64_t>{free_seq});
  CHECK(f.state("p", "running") == child_state::cancelled);
  CHECK(f.state("p", "free") == child_state::cancelled);
  CHECK(f.state("p", "taken") == child_state::completed);
  CHECK(f.book.cancel("nobody", {"x"}).cancelled.empty());
  // Cancelling a delivered child changes nothing.
  f.book.consume(std::move(r));
  f.book.cancel("p", {"taken"});
  CHECK(f.state("p", "taken") == child_state::delivered);
}

TEST_CASE("recover: held results come back completed, those in an unacknowledged delivery delivering") {
  fixture f;
  pending_queue::recovered what;
  what.results.push_back(f.put("p", "a").held);
  what.results.push_back(f.put("p", "b").held);
  what.deliveries.push_back(stored_delivery{"p", "dlv-old", {what.results[1].seq}, "{}"});
  f.book.recover(std::move(what));
  CHECK(f.state("p", "a") == child_state::completed);
  CHECK(f.state("p", "b") == child_state::delivering);
  CHECK(f.book.find_child("p", "b")->delivery_id == "dlv-old");
  REQUIRE(f.book.find("p")->unacked.size() == 1);
  CHECK(f.book.acknowledge("p", "dlv-old"));
  CHECK(f.state("p", "b") == child_state::delivered);
}

TEST_CASE("reserve_deliverable skips the children a wait in progress listed") {
  fixture f;
  f.complete("p", "a");
  f.complete("p", "b");
  auto w = f.book.watch_children("p", {"a"}, [] {});
  auto r = f.book.reserve_deliverable("p");
  REQUIRE(r.held().size() == 1);
  CHECK(r.held()[0].info.child_id == "b");
}

TEST_CASE("waits: woken on every change, settled and sorted by outcome, a dropped watch is not woken") {
  fixture f;
  f.book.start("p", "run", "");
  f.complete("p", "done");
  f.complete("p", "other");
  int woken = 0;
  {
    auto w = f.book.watch_children("p", {"run", "done"}, [&] { ++woken; });
    CHECK_FALSE(f.book.settled("p", {"run", "done"}));
    f.complete("p", "run");
    CHECK(woken == 1);
    CHECK(f.book.settled("p", {"run", "done"}));
    // A result reserved by another client may come back: not settled.
    auto elsewhere = f.book.reserve("p", {"other"});
    CHECK_FALSE(f.book.settled("p", {"other"}));
  }
  const int before = woken;
  f.complete("p", "later");
  CHECK(woken == before);

  auto mine = f.book.reserve("p", {"run"});
  f.book.cancel("p", {"done"});
  auto other = f.book.reserve("p", {"other"});
  f.complete("p", "x");
  auto xr = f.book.reserve("p", {"x"});
  f.book.consume(std::move(xr));
  f.book.start("p", "still", "");
  const auto where = f.book.outcome_of("p", {"run", "done", "other", "x", "still", "never"}, mine);
  CHECK(where.cancelled == std::vector<std::string>{"done"});
  CHECK(where.pending == std::vector<std::string>{"other", "still"});
  CHECK(where.already_delivered == std::vector<std::string>{"x"});
  CHECK(where.forgotten == std::vector<std::string>{"never"});
  // Unknown parents and children count as settled (forgotten).
  CHECK(f.book.settled("nobody", {"a"}));
}

TEST_CASE("wake_all and detach wake every wait") {
  fixture f;
  f.book.touch("p");
  f.book.touch("q");
  int woken = 0;
  auto a = f.book.watch_children("p", {"x"}, [&] { ++woken; });
  auto b = f.book.watch_children("q", {"y"}, [&] { ++woken; });
  f.book.wake_all();
  CHECK(woken == 2);
  f.book.detach(nullptr);
  CHECK(woken == 4);
}

TEST_CASE("set_idle says whether to deliver") {
  fixture f;
  CHECK(f.book.set_idle("p", true));
  CHECK(f.book.find("p")->idle);
  CHECK_FALSE(f.book.set_idle("p", false));
  CHECK_FALSE(f.book.find("p")->idle);
}

TEST_CASE("forget: a quiet, disconnected parent goes after the grace period, not before") {
  fixture f;
  auto endpoint = std::make_shared<int>(0);
  f.book.attach("p", endpoint);
  f.complete("p", "a");
  f.book.consume(f.book.reserve("p", {"a"}));
  f.now += 10 * grace;
  CHECK(f.book.forget_due().parents == 0);  // still connected (its settled child goes, though)
  CHECK(f.book.find_child("p", "a") == nullptr);
  f.book.detach(endpoint.get());
  f.now += grace - 1ms;
  CHECK(f.book.forget_due().parents == 0);
  CHECK(f.book.find("p") != nullptr);
  f.now += 1ms;
  CHECK(f.book.forget_due().parents == 1);
  CHECK(f.book.find("p") == nullptr);
  CHECK(f.book.parent_count() == 0);
}

TEST_CASE("forget: an endpoint that went away without detach counts as no connection") {
  fixture f;
  {
    auto endpoint = std::make_shared<int>(0);
    f.book.attach("p", endpoint);
  }
  f.now += grace;
  CHECK(f.book.forget_due().parents == 1);
}

TEST_CASE("forget: never while a child runs, is held, is unacknowledged, or a wait is on") {
  fixture f;
  f.book.start("running", "c", "");
  f.complete("held", "c");
  f.complete("unacked", "c");
  auto r = f.book.reserve("unacked", {"c"});
  const auto d = f.delivery(r, "dlv");
  f.book.begin_delivery(std::move(r), d);
  f.book.touch("waited");
  auto w = f.book.watch_children("waited", {"c"}, [] {});
  f.book.touch("quiet");
  f.now += 100 * grace;
  const auto gone = f.book.forget_due();
  CHECK(gone.parents == 1);
  CHECK(f.book.find("quiet") == nullptr);
  for (const char* kept : {"running", "held", "unacked", "waited"}) CHECK(f.book.find(kept) != nullptr);
  // Once acknowledged, the grace counts from then.
  CHECK(f.book.acknowledge("unacked", "dlv"));
  CHECK(f.book.forget_due().parents == 0);
  f.now += grace;
  CHECK(f.book.forget_due().parents == 1);
  CHECK(f.book.find("unacked") == nullptr);
}

TEST_CASE("forget: a live parent's settled children go after the grace, others stay") {
  fixture f;
  auto endpoint = std::make_shared<int>(0);
  f.book.attach("p", endpoint);
  f.complete("p", "delivered");
  f.book.consume(f.book.reserve("p", {"delivered"}));
  f.book.start("p", "cancelled", "");
  f.book.cancel("p", {"cancelled"});
  f.complete("p", "held");
  f.book.start("p", "running", "");
  f.now += grace / 2;
  f.complete("p", "late");
  f.book.consume(f.book.reserve("p", {"late"}));
  f.now += grace / 2;
  const auto gone = f.book.forget_due();
  CHECK(gone.parents == 0);
  CHECK(gone.children == 2);
  CHECK(f.book.find_child("p", "delivered") == nullptr);
  CHECK(f.book.find_child("p", "cancelled") == nullptr);
  CHECK(f.book.find_child("p", "held") != nullptr);
  CHECK(f.book.find_child("p", "running") != nullptr);
  CHECK(f.book.find_child("p", "late") != nullptr);
  // A wait on a forgotten child says so.
  const auto where = f.book.outcome_of("p", {"delivered"}, reservation{});
  CHECK(where.forgotten == std::vector<std::string>{"delivered"});
}

TEST_CASE("count: children per state and the bytes held") {
  fixture f;
  f.book.start("p", "r", "");
  f.complete("p", "c");
  f.complete("p", "d");
  auto r = f.book.reserve("p", {"d"});
  const auto d = f.delivery(r, "dlv");
  f.book.begin_delivery(std::move(r), d);
  f.complete("q", "x");
  f.book.consume(f.book.reserve("q", {"x"}));
  const auto n = f.book.count();
  CHECK(n.parents == 2);
  CHECK(n.running == 1);
  CHECK(n.completed == 1);
  CHECK(n.delivering == 1);
  CHECK(n.delivered == 1);
  CHECK(n.pending_bytes == 200);
}
