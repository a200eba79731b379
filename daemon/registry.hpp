// What the daemon knows about parents and their children: pure in-memory state, owned by the
// I/O thread. Full texts are not here (they stay in the durable queue on disk).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <functional>
#include <vector>

#include "engine/pending_queue.hpp"

namespace handoff::daemon {

class connection;
struct waiter;

enum class child_state {
  running,     // started, not completed
  completed,   // held in the queue, not yet delivered
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
  std::optional<held_result> held;   // when completed or delivering
  std::string delivery_id;           // when delivering
  bool reserved = false;             // taken by a wait whose reply is being written
  // Outcome kept after the result left the queue, for check.
  std::optional<result_status> final_status;
  std::size_t final_bytes = 0, final_lines = 0;
};

struct parent {
  std::string id;
  std::weak_ptr<connection> endpoint;  // the connection that registered as this parent
  bool idle = false;                   // last parent/state; busy until told otherwise
  bool flushing = false;               // an auto-delivery is in progress
  bool flush_scheduled = false;        // a flush will start after the coalescing delay
  bool flush_again = false;            // a flush was asked for while one ran: run one after it
  std::map<std::string, child> children;
  std::vector<stored_delivery> unacked;  // sent (or recovered), not acknowledged, oldest first
  std::vector<waiter*> waiters;          // waits in progress on this parent
};

class registry {
 public:
  parent& get_or_create(const std::string& parent_id);
  parent* find(const std::string& parent_id);
  child* find_child(const std::string& parent_id, const std::string& child_id);
  const std::map<std::string, parent>& parents() const noexcept { return parents_; }
  std::map<std::string, parent>& parents_mutable() noexcept { return parents_; }

  // Results ready for delivery, completion order: completed, not reserved, and (when
  // `skip_claimed`) not listed by a wait in progress.
  std::vector<child*> deliverable(parent& p, bool skip_claimed);

  struct counts {
    std::size_t parents = 0, running = 0, completed = 0, delivering = 0, delivered = 0;
    std::size_t pending_bytes = 0;  // full-text bytes held for completed + delivering results
  };
  counts count() const;

 private:
  std::map<std::string, parent> parents_;
};

// A subagent/wait in progress: woken whenever one of its children changes state.
struct waiter {
  std::vector<std::string> child_ids;
  std::function<void()> wake;
};

}  // namespace handoff::daemon
