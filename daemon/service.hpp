// The method table and its handlers: typed params in, typed results out. Joins the protocol
// (decoders/encoders) with the engine (queue, store, batch) and the registry.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include <asio/awaitable.hpp>
#include <asio/io_context.hpp>
#include <asio/thread_pool.hpp>
#include <nlohmann/json.hpp>

#include "config.hpp"
#include "connection.hpp"
#include "engine/artifact_store.hpp"
#include "engine/batch.hpp"
#include "engine/pending_queue.hpp"
#include "protocol/messages.hpp"
#include "registry.hpp"
#include "store_listing.hpp"

namespace handoff::daemon {

// A handler's answer: the result, and what to do once it was written (or failed to be).
struct reply {
  nlohmann::json result;
  std::function<void(bool written)> on_written;
};

class service final : public message_sink {
 public:
  service(const config& cfg, asio::io_context& io, asio::thread_pool& pool, artifact_store& store,
          pending_queue& queue);

  // Loads what the queue held at start into the registry. Returns problems found (logged).
  std::vector<std::string> recover();
  // Starts refusing new work and ends waits in progress with `shutting_down`.
  void shutdown();

  asio::awaitable<void> on_message(std::shared_ptr<connection> conn, rpc::message msg) override;
  void on_closed(const std::shared_ptr<connection>& conn) override;
  void on_input_closed(const std::shared_ptr<connection>& conn) override;

  std::size_t connections_open() const noexcept { return connections_; }
  void connection_opened() noexcept { ++connections_; }
  std::size_t flushes_running() const noexcept { return flushes_running_; }

 private:
  using handler = std::function<asio::awaitable<reply>(std::shared_ptr<connection>, const nlohmann::json&)>;
  // Binds a method name to a decoder and a member handler taking typed params.
  template <class Params, class Handler>
  void bind(std::string method, Params (*decode)(const nlohmann::json&, const rpc::wire_limits&),
            Handler h);

  asio::awaitable<reply> initialize(std::shared_ptr<connection> conn, rpc::initialize_params p);
  asio::awaitable<reply> started(std::shared_ptr<connection> conn, rpc::started_params p);
  asio::awaitable<reply> progress(std::shared_ptr<connection> conn, rpc::progress_params p);
  asio::awaitable<reply> completed(std::shared_ptr<connection> conn, rpc::completed_params p);
  asio::awaitable<reply> check(std::shared_ptr<connection> conn, rpc::check_params p);
  asio::awaitable<reply> wait(std::shared_ptr<connection> conn, rpc::wait_params p);
  asio::awaitable<reply> cancel(std::shared_ptr<connection> conn, rpc::cancel_params p);
  asio::awaitable<reply> parent_state(std::shared_ptr<connection> conn, rpc::parent_state_params p);
  asio::awaitable<reply> artifact_read(std::shared_ptr<connection> conn, rpc::artifact_read_params p);
  asio::awaitable<reply> status(std::shared_ptr<connection> conn, const nlohmann::json& params);
  asio::awaitable<reply> gc(std::shared_ptr<connection> conn, const nlohmann::json& params);  // gc_method.cpp

  // Auto-delivery (delivery.cpp).
  void schedule_flush(const std::string& parent_id, bool immediately = false);
  asio::awaitable<void> delayed_flush(std::string parent_id, std::chrono::milliseconds delay);
  asio::awaitable<void> flush(std::string parent_id);
  asio::awaitable<bool> send_delivery(std::shared_ptr<connection> endpoint, stored_delivery d);
  asio::awaitable<std::optional<context_usage>> ask_usage(const std::shared_ptr<connection>& endpoint,
                                                          const std::string& parent_id);

  // Projects the given held results into a batch on the worker pool.
  struct built_batch {
    batch b;
    std::vector<std::uint64_t> admitted_seqs;
  };
  asio::awaitable<built_batch> build(std::vector<held_result> results, batch_options options);

  parent& require_parent(const std::string& parent_id);
  void wake_waiters(parent& p);
  void mark_delivered(parent& p, const std::vector<std::uint64_t>& seqs);

  const config& cfg_;
  asio::io_context& io_;
  asio::thread_pool& pool_;
  artifact_store& store_;
  pending_queue& queue_;
  registry registry_;
  std::map<std::string, handler, std::less<>> methods_;
  std::chrono::steady_clock::time_point started_at_ = std::chrono::steady_clock::now();
  std::size_t connections_ = 0;
  std::size_t flushes_running_ = 0;
  std::size_t queue_changes_in_flight_ = 0;  // removals running on the pool that no reply awaited
  store_listing store_listing_;  // daemon/status's last listing of the store, while unchanged  // auto-deliveries in progress (shutdown lets them finish)
  std::uint64_t delivery_counter_ = 0;
  bool stopping_ = false;
};

// Engine batch -> wire batch.
rpc::batch_dto to_wire(const batch& b);

}  // namespace handoff::daemon
