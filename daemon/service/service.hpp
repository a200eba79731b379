// The method table and its handlers: typed params in, typed results out. Joins the protocol
// (decoders/encoders) with the engine (queue, store, batch) and the ledger, which owns every
// parent's and child's lifecycle (ledger.hpp); handlers ask the ledger for a transition and do
// the disk work it calls for on the worker pool.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include <asio/awaitable.hpp>
#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>
#include <asio/thread_pool.hpp>
#include <nlohmann/json.hpp>

#include "auto_delivery.hpp"
#include "batch_builder.hpp"
#include "config.hpp"
#include "net/connection.hpp"
#include "engine/store/artifact_store.hpp"
#include "engine/text/batch.hpp"
#include "engine/queue/pending_queue.hpp"
#include "runtime/in_flight.hpp"
#include "ledger/ledger.hpp"
#include "protocol/daemon_messages.hpp"
#include "protocol/messages.hpp"
#include "protocol/methods.hpp"
#include "upkeep/store_listing.hpp"
#include "to_wire.hpp"

namespace handoff::daemon {

// A request handler's answer: its method's result type (protocol/methods.hpp), and what to do
// once it was written (or failed to be). The method table encodes it (service.cpp); a handler
// whose Result is not its method's does not bind.
template <class Result>
struct reply {
  Result result{};
  std::function<void(bool written)> on_written;
};

// A reply as the dispatcher sends it: the result encoded, as JSON text.
struct encoded_reply {
  std::string result = "null";
  std::function<void(bool written)> on_written;
};

class service final : public message_sink {
 public:
  service(const config& cfg, asio::io_context& io, asio::thread_pool& pool, artifact_store& store,
          pending_queue& queue);

  // Loads what the queue held at start into the ledger (recover.cpp). Returns problems found
  // (logged).
  std::vector<std::string> recover();
  // Starts the forgetting sweep on the I/O context (forgetting.cpp); shutdown() stops it. Kept
  // apart from recover() so a harness that runs the context until it is idle can leave it out.
  void start_forgetting();
  // Starts refusing new work, ends waits in progress with `shutting_down`, stops forgetting
  // (shutdown.cpp).
  void shutdown();

  bool answer_now(const std::shared_ptr<connection>& conn, const rpc::message& msg) override;
  bool answer_now(const std::shared_ptr<connection>& conn, const rpc::request_text& request) override;
  asio::awaitable<void> on_message(std::shared_ptr<connection> conn, rpc::message msg) override;
  void on_closed(const std::shared_ptr<connection>& conn) override;
  void on_input_closed(const std::shared_ptr<connection>& conn) override;

  void connection_opened() noexcept { connections_.add(); }
  // Open connections and running auto-deliveries: shutdown waits for both to reach zero.
  in_flight& connections() noexcept { return connections_; }
  in_flight& flushes() noexcept { return deliveries_.running(); }
  // How long the I/O thread polls after the last thing it handled (io_loop.hpp), given
  // --spin-us: `spin` while the pool works on no client's answer; while it works on exactly
  // one (a completion being written, a wait's batch being built), long enough to take that
  // answer without being woken (lone_answer_spin: a completion's answer comes after one
  // fdatasync, which on a local disk ends within it); while it works on several, none (the pool's threads need the
  // CPUs of a small machine). Zero when `spin` is.
  std::chrono::microseconds polling_window(std::chrono::microseconds spin) const noexcept;
  static constexpr std::chrono::microseconds lone_answer_spin{2000};

 private:
  // The params are the request's own: a decoder may move a member out (finalText, megabytes).
  // The id is the request's (null for a notification), for handlers a client may cancel.
  using handler = std::function<asio::awaitable<encoded_reply>(std::shared_ptr<connection>, nlohmann::json&,
                                                               const nlohmann::json&)>;
  // Runs on the I/O thread and returns at once; nullopt when it cannot answer without waiting
  // (the method's awaitable handler then does).
  using instant_handler =
      std::function<std::optional<encoded_reply>(const std::shared_ptr<connection>&, const nlohmann::json&)>;
  // `now` from the params' text (rpc::read_params_text); nullopt also when the typed reader
  // declines them: the request then takes the ordinary path.
  using text_handler =
      std::function<std::optional<encoded_reply>(const std::shared_ptr<connection>&, std::string_view params)>;
  // One entry of the method table: at least one of the two is set; `now` is tried first.
  struct method {
    instant_handler now;    // needs neither the disk nor the pool
    text_handler now_text;  // the same, set with it for requests
    handler later;          // a coroutine of its own
  };
  // Binds a method (protocol/methods.hpp) to a member handler typed by it: the params type
  // decodes the request (-32602 naming the field), and the handler returns the method's Result,
  // which the table encodes; a handler of other types, or a daemon -> client method, does not
  // compile. `bind` an awaitable handler; `bind_now` one that answers at once on the I/O thread
  // (a reply, or an optional reply when it may need to wait: the awaitable one then answers);
  // `bind_cancellable` an awaitable one that also takes the request's id ($/cancelRequest
  // names it). A notification's handler returns nothing.
  template <class Params, class Result>
  void bind(const rpc::request_type<Params, Result>& m,
            asio::awaitable<reply<Result>> (service::*h)(std::shared_ptr<connection>, Params));
  template <class Params, class Result>
  void bind_cancellable(const rpc::request_type<Params, Result>& m,
                        asio::awaitable<reply<Result>> (service::*h)(std::shared_ptr<connection>, Params,
                                                                     nlohmann::json));
  template <class Params, class Result>
  void bind_now(const rpc::request_type<Params, Result>& m,
                reply<Result> (service::*h)(const std::shared_ptr<connection>&, Params));
  template <class Params, class Result>
  void bind_now(const rpc::request_type<Params, Result>& m,
                std::optional<reply<Result>> (service::*h)(const std::shared_ptr<connection>&, Params));
  template <class Params>
  void bind_now(const rpc::notification_type<Params>& m, void (service::*h)(const std::shared_ptr<connection>&, Params));

  // Dispatch (service.cpp): the method `msg` names, or nullptr once the error was answered
  // (unknown method, shutting down); and the one place a request's outcome becomes its reply.
  const method* route(connection& conn, const rpc::message& msg) const;
  void answer(connection& conn, const rpc::message& msg, encoded_reply r) const;
  void answer_error(connection& conn, const rpc::message& msg, rpc::errc code, const std::string& text,
                    const nlohmann::json& data = nullptr) const;
  void answer_failure(connection& conn, const rpc::message& msg, std::exception_ptr failure) const;

  reply<rpc::initialize_result> initialize(const std::shared_ptr<connection>& conn, rpc::initialize_params p);
  reply<rpc::started_result> started(const std::shared_ptr<connection>& conn, rpc::started_params p);
  void progress(const std::shared_ptr<connection>& conn, rpc::progress_params p);
  asio::awaitable<reply<rpc::completed_result>> completed(std::shared_ptr<connection> conn, rpc::completed_params p);  // completed.cpp
  asio::awaitable<reply<rpc::check_result>> check(std::shared_ptr<connection> conn, rpc::check_params p);
  asio::awaitable<reply<rpc::wait_result>> wait(std::shared_ptr<connection> conn, rpc::wait_params p, nlohmann::json request_id);             // wait.cpp
  asio::awaitable<reply<rpc::cancel_result>> cancel(std::shared_ptr<connection> conn, rpc::cancel_params p);
  void parent_state(const std::shared_ptr<connection>& conn, rpc::parent_state_params p);
  void cancel_request(const std::shared_ptr<connection>& conn, rpc::cancel_request_params p);
  asio::awaitable<reply<rpc::artifact_read_result>> artifact_read(std::shared_ptr<connection> conn, rpc::artifact_read_params p);
  // daemon/status (status_method.cpp): at once while no queue removal runs and the store
  // listing is current, else after waiting for both.
  std::optional<reply<rpc::status_result>> status_now(const std::shared_ptr<connection>& conn, rpc::status_params p);
  asio::awaitable<reply<rpc::status_result>> status(std::shared_ptr<connection> conn, rpc::status_params p);
  rpc::status_result status_with(rpc::store_status store) const;
  asio::awaitable<reply<rpc::gc_result>> gc(std::shared_ptr<connection> conn, rpc::gc_params p);                // gc_method.cpp

  // subagent/wait's steps (wait.cpp).
  asio::awaitable<void> require_known(const std::string& parent_id, const std::vector<std::string>& child_ids);
  asio::awaitable<bool> sleep_until_settled(const std::shared_ptr<connection>& conn, const rpc::wait_params& p,
                                            const std::vector<std::string>& siblings,
                                            const nlohmann::json& request_id);
  void on_wait_written(reservation& taken, bool written, std::vector<std::string> artifacts);
  std::vector<held_result> companions_of(const std::string& parent_id, const std::vector<std::string>& siblings) const;

  // Removes results from the queue on the pool, counted in queue_changes_ (daemon/status waits
  // for them), logging what the disk refused. Fire and forget. The store's `artifacts` (hashes)
  // are synced first: a result leaves the queue only once the artifact its footer named is
  // durable; when that sync fails the results stay queued (delivered again after a restart).
  void consume_in_background(std::vector<std::uint64_t> seqs, std::vector<std::string> artifacts = {});
  // Waits, at most 2 s (one fsync per result), for the removals consume_in_background() has
  // under way: daemon/status and daemon/gc asked after a wait's reply see that reply's effect.
  asio::awaitable<void> removals_settled();
  // Whether the queue remembers delivering `child_id` of `parent_id` (its tombstone): a child the
  // ledger forgot.
  asio::awaitable<bool> delivered_before(const std::string& parent_id, const std::string& child_id);


  // Forgetting (forgetting.cpp): a sweep every min(grace / 4, 60 s), at least every 10 ms.
  asio::awaitable<void> forget_loop();

  // The parent's endpoint connection, if it is open.
  std::shared_ptr<connection> endpoint_of(const std::string& parent_id) const;

  const config& cfg_;
  asio::io_context& io_;
  asio::thread_pool& pool_;
  artifact_store& store_;
  pending_queue& queue_;
  ledger ledger_;
  std::map<std::string, method, std::less<>> methods_;
  std::chrono::steady_clock::time_point started_at_ = std::chrono::steady_clock::now();
  in_flight connections_;
  in_flight queue_changes_;  // removals running on the pool that no reply awaited
  in_flight pool_answers_;   // requests whose answer waits for the pool: completions being written, waits' batches built
  store_listing store_listing_;  // daemon/status's last listing of the store, while unchanged
  asio::steady_timer forget_timer_;
  batch_builder batches_;       // subagent/wait's and auto-delivery's batches
  auto_delivery deliveries_;    // auto-delivery (auto_delivery.hpp)
  bool stopping_ = false;
};

}  // namespace handoff::daemon
