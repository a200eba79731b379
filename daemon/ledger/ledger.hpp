// The ledger: every parent the daemon knows, its children and where each child's result is in
// its life. One class owns the lifecycle; no Asio, no JSON, no disk. The durable queue
// (engine/queue/pending_queue.hpp) keeps results across crashes; the ledger decides, and its
// transitions say what the caller must then do on disk (consume these seqs, complete that
// delivery). Owned by the I/O thread: not thread-safe.
//
// A child's life. These are the only transitions; any other call on a child in another state
// changes nothing (each method says what it ignores), and tests/ledger/ledger_test.cpp covers both.
//
//   from                     method                                     to
//   (unknown)                start, progress                            running
//   running                  complete                                   completed (held)
//   running                  complete, the queue had delivered it       delivered
//   running, completed [1]   cancel                                     cancelled
//   completed [1]            reserve, reserve_deliverable               completed, reserved
//   completed, reserved      reservation dropped, keep_only             completed
//   completed, reserved      begin_delivery                             delivering (+ unacked)
//   completed, reserved      consume (a wait's reply was written)       delivered
//   delivering               acknowledge                                delivered (- unacked)
//   cancelled                complete (the caller consumes the result)  cancelled
//   delivered                complete of a text the queue no longer     completed
//                            remembers (its tombstone expired)
//   delivered, cancelled     forget_due, `grace` after it settled       (forgotten)
//   (start of the daemon)    recover                                    completed or delivering
//   [1] not reserved
//
//   running --complete--> completed --reserve--> reserved --begin_delivery--> delivering
//      |                     |   ^                  |                            |
//      | cancel       cancel |   '---- dropped -----'                 acknowledge |
//      v                     v                       '--consume--> delivered <----'
//   cancelled <--------------'                                         |
//      '------------------------- grace ----------> (forgotten) <------'
//
// What is held (a completed or delivering child's `held`) and what awaits acknowledgement (a
// parent's `unacked`) live here only; the service reads them from here, never keeps copies.
// The queue's own maps index the files on disk (by key and seq) so it can write and remove
// them; nothing outside the queue reads them.
//
// Forgetting (`forget_due`): a parent with no child running, completed or delivering, nothing
// unacknowledged, no wait in progress and no live endpoint is forgotten once `grace` has passed
// since it last changed; a delivered or cancelled child of a parent that stays is forgotten
// `grace` after it settled. Until then a parent that reconnects still hears `alreadyDelivered`.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/queue/pending_queue.hpp"

namespace handoff::daemon {

using ledger_clock = std::chrono::steady_clock;

enum class child_state {
  running,     // started (or its completion is being written), not completed
  completed,   // held in the queue, not yet delivered; may be reserved
  delivering,  // in an auto-delivery the parent has not acknowledged yet
  delivered,   // delivered or consumed by a wait: gone from the queue
  cancelled,   // the parent dropped interest
};
std::string_view to_string(child_state s) noexcept;

struct child {
  std::string id;
  std::string title;
  child_state state = child_state::running;
  std::string progress;              // tail of the latest activity text (<= 2 KiB)
  std::optional<held_result> held;   // set exactly when completed or delivering
  std::string delivery_id;           // set exactly when delivering
  bool reserved = false;             // completed, and taken by a reservation
  // Outcome kept after the result left the queue, for check.
  std::optional<result_status> final_status;
  std::size_t final_bytes = 0, final_lines = 0;
  std::uint64_t final_seq = 0;       // the seq it had (orders it among a wait's batchWith)
  std::string final_error;
  ledger_clock::time_point settled_at{};  // when it became delivered or cancelled
};

struct parent {
  std::string id;
  std::weak_ptr<void> endpoint;          // the connection registered as this parent (opaque here)
  bool idle = false;                     // last parent/state; busy until told otherwise
  std::map<std::string, child> children;
  std::vector<stored_delivery> unacked;  // sent (or recovered), not acknowledged, oldest first
  ledger_clock::time_point changed_at{}; // last transition on this parent or its children
};

// What complete() did with a completion the queue has just made durable.
enum class completion_effect {
  held,               // now completed: wake waits, auto-deliver if the parent is idle
  already_delivered,  // a resend of a result that left the queue: the child is delivered
  consume_now,        // the child was cancelled: the caller consumes `held.seq` from the queue
  unchanged,          // a duplicate of what the child already has
};

// Where the children a wait listed are, once it stops waiting.
struct wait_outcome {
  std::vector<std::string> pending;            // running, or reserved by another client
  std::vector<std::string> already_delivered;  // delivering or delivered
  std::vector<std::string> cancelled;
  std::vector<std::string> forgotten;          // no longer in the ledger
};

class ledger;

// Children taken from the pool of deliverable results, in completion (seq) order. Move-only;
// whatever it still holds when destroyed goes back (unreserved, waits woken), so a wait or a
// delivery that fails or is abandoned part-way returns its children by simply dropping this.
class reservation {
 public:
  reservation() = default;
  reservation(reservation&& other) noexcept;
  reservation& operator=(reservation&& other) noexcept;
  reservation(const reservation&) = delete;
  reservation& operator=(const reservation&) = delete;
  ~reservation();

  const std::string& parent_id() const noexcept { return parent_id_; }
  // The held results, in seq order.
  const std::vector<held_result>& held() const noexcept { return held_; }
  bool empty() const noexcept { return held_.empty(); }
  std::vector<std::uint64_t> seqs() const;
  // Gives back every child whose seq is not in `admitted` (a batch's deferred results).
  void keep_only(const std::vector<std::uint64_t>& admitted);
  // Gives everything back now.
  void release();
  // Takes over what `other` (of the same ledger and parent) holds, keeping seq order.
  void absorb(reservation&& other);

 private:
  friend class ledger;
  reservation(ledger* owner, std::string parent_id, std::vector<held_result> held)
      : owner_(owner), parent_id_(std::move(parent_id)), held_(std::move(held)) {}
  ledger* owner_ = nullptr;
  std::string parent_id_;
  std::vector<held_result> held_;
};

// A wait in progress on some children of one parent: its `wake` runs whenever one of the
// parent's children changes, and at shutdown. Move-only; deregisters when destroyed.
class watch {
 public:
  watch() = default;
  watch(watch&& other) noexcept;
  watch& operator=(watch&& other) noexcept;
  watch(const watch&) = delete;
  watch& operator=(const watch&) = delete;
  ~watch();

 private:
  friend class ledger;
  struct entry;
  watch(ledger* owner, std::shared_ptr<entry> e) : owner_(owner), entry_(std::move(e)) {}
  ledger* owner_ = nullptr;
  std::shared_ptr<entry> entry_;
};

class ledger {
 public:
  using clock_fn = std::function<ledger_clock::time_point()>;
  // `grace`: how long a quiet parent or a settled child is kept (--forget-after-ms). `now`: the
  // clock transitions and forgetting read; tests pass a manual one.
  explicit ledger(std::chrono::milliseconds grace, clock_fn now = [] { return ledger_clock::now(); });
  ~ledger();
  ledger(const ledger&) = delete;
  ledger& operator=(const ledger&) = delete;

  // ---- lookups (read-only views; every change goes through a transition below) ----
  const parent* find(std::string_view parent_id) const;
  const child* find_child(std::string_view parent_id, std::string_view child_id) const;
  std::size_t parent_count() const noexcept { return parents_.size(); }
  std::chrono::milliseconds grace() const noexcept { return grace_; }

  // ---- parents ----
  // Makes `parent_id` known (idempotent).
  void touch(const std::string& parent_id);
  // `endpoint` becomes the parent's connection (replacing any other).
  void attach(const std::string& parent_id, std::weak_ptr<void> endpoint);
  // `endpoint` closed: every parent it served (and any whose endpoint is gone) loses it.
  void detach(const void* endpoint);
  // parent/state: idle or busy. Returns true when the parent is idle with results to deliver.
  bool set_idle(const std::string& parent_id, bool idle);

  // ---- transitions of a child ----
  // subagent/started: known and running unless it already had a state; returns that state.
  child_state start(const std::string& parent_id, const std::string& child_id, const std::string& title);
  // A child that start() made known for a completion the queue then refused (a conflict, a
  // failed write) goes back to unknown, as if never started; any other child is left as it is.
  void unstart(const std::string& parent_id, const std::string& child_id);
  // subagent/progress: keeps the tail of `text` (a child not yet known starts running).
  void progress(const std::string& parent_id, const std::string& child_id, std::string_view text);
  // The queue has made a completion durable (`outcome` from pending_queue::put).
  completion_effect complete(const pending_queue::put_outcome& outcome);
  // Reserves the listed children that are completed and not reserved (a wait's results).
  reservation reserve(const std::string& parent_id, const std::vector<std::string>& child_ids);
  // Reserves every completed, unreserved child no wait in progress lists (an auto-delivery).
  reservation reserve_deliverable(const std::string& parent_id);
  // The reserved children went out in `d` (recorded in the queue): delivering until acknowledged.
  // `d.seqs` must be the reservation's (after keep_only).
  void begin_delivery(reservation&& r, stored_delivery d);
  // The parent acknowledged `delivery_id`: its children are delivered. False if unknown.
  bool acknowledge(const std::string& parent_id, const std::string& delivery_id);
  // A wait's reply carrying the reserved children was written: delivered. Returns their seqs,
  // for the caller to consume from the queue.
  std::vector<std::uint64_t> consume(reservation&& r);
  struct cancel_outcome {
    std::vector<std::string> cancelled;  // ids that were known
    std::vector<std::uint64_t> consume;  // completed results dropped: consume from the queue
  };
  // subagent/cancel: running and completed-unreserved children become cancelled; reserved or
  // delivering ones keep going (their delivery is already under way). Throws nothing.
  cancel_outcome cancel(const std::string& parent_id, const std::vector<std::string>& child_ids);
  // Loads what the queue held at start. Call once, before anything else.
  void recover(pending_queue::recovered what);
  // Forgets what the grace period allows (see the top). Returns how many parents and children
  // went.
  struct forgotten_count {
    std::size_t parents = 0, children = 0;
  };
  forgotten_count forget_due();

  // ---- waits ----
  // Registers a wait on `child_ids` of a known parent; `wake` runs on every change to it.
  watch watch_children(const std::string& parent_id, std::vector<std::string> child_ids, std::function<void()> wake);
  // Every listed child has an outcome and none is reserved by another client (a reserved result
  // may come back). A forgotten child or parent counts as settled.
  bool settled(const std::string& parent_id, const std::vector<std::string>& child_ids) const;
  // Some listed child is running (a wait's batchWith siblings: reserved ones count as done).
  bool any_running(const std::string& parent_id, const std::vector<std::string>& child_ids) const;
  // Sorts the listed children that `taken` (the wait's own reservation) did not take.
  wait_outcome outcome_of(const std::string& parent_id, const std::vector<std::string>& child_ids,
                          const reservation& taken) const;
  // Wakes every wait (shutdown, a connection that closed).
  void wake_all();

  struct counts {
    std::size_t parents = 0, running = 0, completed = 0, delivering = 0, delivered = 0;
    std::size_t waits = 0;          // waits asleep (registered, not yet woken to answer)
    std::size_t pending_bytes = 0;  // full-text bytes held for completed + delivering results
  };
  counts count() const;

 private:
  friend class reservation;
  friend class watch;
  parent& get_or_create(const std::string& parent_id);
  parent* find_mutable(std::string_view parent_id);
  child& child_of(parent& p, const std::string& child_id);
  void settle(child& c, child_state to);
  void give_back(const std::string& parent_id, const std::vector<held_result>& held);
  void wake(const std::string& parent_id);
  void unwatch(const std::shared_ptr<watch::entry>& e);
  bool claimed_by_a_wait(const std::string& parent_id, const std::string& child_id) const;
  bool forgettable(const parent& p, ledger_clock::time_point now) const;

  std::chrono::milliseconds grace_;
  clock_fn now_;
  std::map<std::string, parent, std::less<>> parents_;
  std::multimap<std::string, std::shared_ptr<watch::entry>, std::less<>> watches_;  // by parent id
};

}  // namespace handoff::daemon
