// The bookkeeping of the crash-loop test (tests/daemon/daemon_crash_loop_test.cpp): every completion the
// producers sent and whether handoffd acknowledged it, every result the parents received and
// whether they acknowledged it. It checks docs/design.md §8 as events arrive and says at the
// end what is still owed:
//   - an acknowledged completion is delivered at least once;
//   - a result rides in one auto-delivery only: after the parent saw delivery D (acknowledged
//     or not) the result may come again only as a resend of D, unchanged;
//   - a result a wait returned comes again only when a kill cut its consumption, that is when a
//     later daemon still held it (checked by the waiter after each restart); once a later
//     daemon no longer held it, it never comes again;
//   - what comes is the text that was sent: byte for byte when whole, else an artifact named by
//     its SHA-256.
// Thread-safe: producers, parent endpoints and waiters report from their own threads.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "protocol/messages.hpp"

namespace handoff::test {

// One (parent, child) completion, derived from the run's seed and the ids alone, so that a
// retry after a kill sends exactly the same thing. Sizes vary from a few bytes (delivered
// whole) to hundreds of KiB or more than 600 lines (cut, so an artifact is written); the words
// include multi-byte UTF-8 so that cuts meet character boundaries.
struct planned_completion {
  std::string parent_id, child_id, title, status, error;
  std::string final_text;
  std::string sha256;  // of final_text
};
planned_completion plan_completion(std::uint64_t seed, const std::string& parent_id,
                                   const std::string& child_id);

class crash_ledger {
 public:
  using pair_id = std::pair<std::string, std::string>;  // parent, child

  // ---- producers ----
  // Before every attempt; the first registers what the parents must receive.
  void sent(const planned_completion& c);
  // subagent/completed answered with success. `duplicate` may only be true when an earlier
  // attempt was cut; the hash and size must be the text's.
  void acknowledged(const planned_completion& c, const rpc::completed_result& r);
  // Any other answer that breaks the protocol (a conflict for the same text, ...).
  void violation(std::string what);
  // An acknowledged pair, picked at random, for an idempotency or conflict probe.
  std::optional<pair_id> random_acknowledged(std::mt19937_64& rng) const;

  // ---- parents ----
  // An auto-delivery reached `endpoint_parent`. `daemon_pid` is the daemon believed to have
  // sent it (only used for results a wait returned before).
  void delivered(const std::string& endpoint_parent, const rpc::deliver_params& d, pid_t daemon_pid);
  // The endpoint acknowledges `delivery_id` (its answer is on its way).
  void delivery_acknowledged(const std::string& delivery_id);
  // A subagent/wait on `parent_id`, answered by the daemon with pid `daemon_pid`, returned `r`.
  void waited(const std::string& parent_id, const rpc::wait_result& r, pid_t daemon_pid);

  // ---- the waiter ----
  // Acknowledged children of `parent_id` a wait should still collect (at most `max`).
  std::vector<std::string> owed_to_wait(const std::string& parent_id, std::size_t max) const;
  // Children of `parent_id` a wait returned from a daemon other than `daemon_pid`, not yet
  // known to be consumed for good.
  std::vector<std::string> unsettled_wait_receipts(const std::string& parent_id, pid_t daemon_pid) const;
  // What a later daemon said of such a child: still held (the kill cut the consumption: it is
  // owed again) or not (consumed for good).
  void wait_receipt_settled(const std::string& parent_id, const std::string& child_id, bool still_held);
  // True when `child_id` of `parent_id` was acknowledged and the daemon must hold it now.
  bool must_be_held(const std::string& parent_id, const std::string& child_id) const;

  // ---- the end ----
  std::vector<std::string> violations() const;
  std::vector<pair_id> acknowledged_pairs() const;
  std::vector<std::string> undelivered() const;  // acknowledged and never (or no longer) received
  std::set<std::pair<std::filesystem::path, std::string>> artifacts() const;  // path, sha256
  bool all_delivered() const { return undelivered().empty(); }

  struct counts {
    std::size_t attempts = 0, acknowledged = 0, cut_attempts = 0, duplicates_answered = 0;
    std::size_t deliveries = 0, resends = 0, resends_after_ack = 0, sections = 0, truncated = 0;
    std::size_t waits_returning = 0, wait_sections = 0, wait_cut_by_kill = 0, wait_redelivered = 0;
  };
  counts totals() const;

 private:
  struct pair_record {
    std::string sha256, title, status, error;
    std::size_t bytes = 0;
    std::size_t attempts = 0;
    bool acknowledged = false;
    std::string delivery_id;   // the auto-delivery that carries it, once seen
    pid_t wait_pid = 0;        // the daemon whose wait returned it, once returned
    bool wait_settled = false; // a later daemon no longer held it
    bool owed_again = false;   // a later daemon still held it: it must come again
    std::size_t receipts = 0;
  };
  struct delivery_record {
    std::string parent_id, text_sha256;
    std::vector<std::string> children;
    bool acknowledged = false;
  };

  // Compares a received section with what was sent; notes a violation when they differ.
  void check_section(const std::string& parent_id, const rpc::section_dto& s, const pair_record& r,
                     const std::string& where);
  void note(std::string what);

  mutable std::mutex mutex_;
  std::map<pair_id, pair_record> pairs_;
  std::map<std::string, delivery_record> deliveries_;
  std::set<std::pair<std::filesystem::path, std::string>> artifacts_;
  std::vector<std::string> violations_;
  std::size_t violations_dropped_ = 0;
  counts counts_;
};

}  // namespace handoff::test
