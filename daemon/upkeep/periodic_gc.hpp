// The store's periodic collection: once at start, then every --gc-interval-s (store_hygiene.hpp).
// With --gc-interval-s 0 only the start-time sweep of stale temp files runs.
#pragma once

#include <asio/awaitable.hpp>
#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>
#include <asio/thread_pool.hpp>

#include "config.hpp"
#include "engine/store/artifact_store.hpp"
#include "engine/queue/pending_queue.hpp"

namespace handoff::daemon {

class periodic_gc {
 public:
  // Everything passed must outlive this object and the worker pool's last task.
  periodic_gc(asio::io_context& io, asio::thread_pool& pool, const config& cfg, const artifact_store& store,
              pending_queue& queue);

  // Starts the loop on the I/O thread; the collections themselves run on the worker pool.
  void start();
  // No collection starts after this (one already on the pool finishes on its own).
  void stop();

 private:
  asio::awaitable<void> run();

  asio::io_context& io_;
  asio::thread_pool& pool_;
  const config& cfg_;
  const artifact_store& store_;
  pending_queue& queue_;
  asio::steady_timer timer_;
  bool stopping_ = false;
};

}  // namespace handoff::daemon
