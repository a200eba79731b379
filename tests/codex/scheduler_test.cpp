// The codex children's scheduler (client/cli/harness/codex/scheduler.hpp): the running limit,
// the queue's order, and a child's turns one after another.
#include <doctest/doctest.h>

#include <memory>
#include <vector>

#include "cli/harness/codex/scheduler.hpp"

namespace {

using namespace handoff::cli::codex;

// A new turn of `c`, admitted as children::enqueue does.
turn& add_turn(child& c, scheduler& s) {
  auto t = std::make_unique<turn>();
  t->owner = &c;
  t->n = static_cast<int>(c.turns.size()) + 1;
  const bool behind = c.busy();
  c.turns.push_back(std::move(t));
  s.admit(*c.turns.back(), behind);
  return *c.turns.back();
}

}  // namespace

TEST_CASE("codex scheduler: at most max_running run, the rest start in the order they came") {
  scheduler s(2);
  child a, b, c;
  turn& ta = add_turn(a, s);
  turn& tb = add_turn(b, s);
  turn& tc = add_turn(c, s);
  CHECK(s.ready() == std::vector<turn*>{&ta, &tb});
  CHECK(ta.phase == phase::running);
  CHECK(tc.phase == phase::queued);
  CHECK(s.position(tc) == 1);
  CHECK(s.ready().empty());
  s.ended(ta);
  CHECK(s.ready() == std::vector<turn*>{&tc});
  CHECK(s.position(tc) == 0);
}

TEST_CASE("codex scheduler: a child's next turn waits behind its running one, then queues") {
  scheduler s(4);
  child a;
  turn& first = add_turn(a, s);
  CHECK(s.ready() == std::vector<turn*>{&first});
  turn& second = add_turn(a, s);
  CHECK(second.phase == phase::waiting);
  CHECK(s.ready().empty());
  s.ended(first);
  CHECK(s.ready() == std::vector<turn*>{&second});
}

TEST_CASE("codex scheduler: cancel takes a queued turn out of the queue, and leaves a finished turn as it is") {
  scheduler s(1);
  child a, b;
  turn& ta = add_turn(a, s);
  turn& tb = add_turn(b, s);
  REQUIRE(s.ready() == std::vector<turn*>{&ta});
  CHECK(s.cancel(tb));
  CHECK(tb.phase == phase::cancelled);
  CHECK(tb.reported);
  CHECK(!s.cancel(tb));
  s.ended(ta);
  CHECK(s.ready().empty());
  ta.phase = phase::finished;
  CHECK(!s.cancel(ta));
  CHECK(ta.phase == phase::finished);
}
