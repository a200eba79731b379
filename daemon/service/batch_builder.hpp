// Builds one batch on the worker pool from held results: maps their texts, projects each under
// the budget (engine/text/batch.hpp) and saves the cut ones' full texts to the store, linking the
// queue's file where it can. Used by subagent/wait (wait.cpp) and auto-delivery
// (auto_delivery.cpp) alike.
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include <asio/awaitable.hpp>
#include <asio/thread_pool.hpp>

#include "config.hpp"
#include "engine/queue/pending_queue.hpp"
#include "engine/store/artifact_store.hpp"
#include "engine/text/batch.hpp"

namespace handoff::daemon {

class batch_builder {
 public:
  batch_builder(const config& cfg, asio::thread_pool& pool, pending_queue& queue, artifact_store& store)
      : cfg_(cfg), pool_(pool), queue_(queue), store_(store) {}

  struct built_batch {
    batch b;
    std::vector<std::uint64_t> admitted_seqs;
  };
  // Projects `results` into a batch on the worker pool; `companions` share the budget and are
  // not projected (subagent/wait's batchWith).
  asio::awaitable<built_batch> build(std::vector<held_result> results, batch_options options,
                                     std::vector<held_result> companions = {});
  // The daemon's projection settings with a surface's caps.
  batch_options options_for(const surface_caps& caps) const;

 private:
  // Logs that a cut result's artifact was copied although the queue's file was offered (the
  // store on another filesystem...): once at info, then at debug. Any thread.
  void note_artifact_copied(const artifact_ref& artifact);

  const config& cfg_;
  asio::thread_pool& pool_;
  pending_queue& queue_;
  artifact_store& store_;
  std::atomic<bool> artifact_copy_noted_{false};  // note_artifact_copied said it at info
};

}  // namespace handoff::daemon
