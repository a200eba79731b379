// The method table and its handlers: typed params in, typed results out. Joins the protocol
// (decoders/encoders) with the engine (queue, store, batch) and the ledger, which owns every
// parent's and child's lifecycle (ledger.hpp); handlers ask the ledger for a transition and do
// the disk work it calls for on the worker pool.
#pragma once

#include <atomic>
#include <chrono>
#include <concepts>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <variant>

#include <asio/awaitable.hpp>
#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>
#include <asio/thread_pool.hpp>
#include <nlohmann/json.hpp>

#include "service/auto_delivery.hpp"
#include "service/batch_builder.hpp"
#include "config.hpp"
#include "net/connection.hpp"
#include "net/served.hpp"
#include "engine/store/artifact_store.hpp"
#include "engine/text/batch.hpp"
#include "engine/queue/pending_queue.hpp"
#include "runtime/in_flight.hpp"
#include "ledger/ledger.hpp"
#include "protocol/daemon_messages.hpp"
#include "protocol/incoming.hpp"
#include "protocol/messages.hpp"
#include "protocol/methods.hpp"
#include "upkeep/store_listing.hpp"
#include "service/to_wire.hpp"

namespace handoff::daemon {

// Who sent a request: its connection, and its id (null for a notification), which
// $/cancelRequest names.
struct caller {
  std::shared_ptr<connection> conn;
  nlohmann::json id;
};

// A request handler's reply: its method's result type (protocol/methods.hpp), and what to do
// once it was written (or failed to be). The method table encodes it (service.cpp); a handler
// whose Result is not its method's does not bind.
template <class Result>
struct reply {
  Result result{};
  std::function<void(bool written)> on_written;
};

// What a handler that may answer at once or may have to wait returns, deciding in its one call:
// its reply now, or the coroutine that makes it.
template <class Result>
using now_or_later = std::variant<reply<Result>, asio::awaitable<reply<Result>>>;

// A reply as the dispatcher sends it: the result encoded, as JSON text.
struct encoded_reply {
  std::string result = "null";
  std::function<void(bool written)> on_written;
};

// The handler forms the method table binds (service::bind): its Answer and how it takes its
// caller (a coroutine by value: it outlives the call).
template <class Answer, class Caller, class Result>
concept handles = (std::same_as<Answer, reply<Result>> && std::same_as<Caller, const caller&>) ||
                  (std::same_as<Answer, now_or_later<Result>> && std::same_as<Caller, const caller&>) ||
                  (std::same_as<Answer, asio::awaitable<reply<Result>>> && std::same_as<Caller, caller>);

class service final : public served {
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
  void shutdown() override;

  // The one road from a read request to its reply (dispatch.cpp).
  std::optional<asio::awaitable<void>> on_request(const std::shared_ptr<connection>& conn, rpc::incoming& in) override;
  void on_closed(const std::shared_ptr<connection>& conn) override;
  void on_input_closed(const std::shared_ptr<connection>& conn) override;

  void connection_opened() noexcept override { connections_.add(); }
  // Open connections and running auto-deliveries: shutdown waits for both to reach zero.
  in_flight& connections() noexcept override { return connections_; }
  in_flight& flushes() noexcept override { return deliveries_.running(); }
  // How long the I/O thread polls after the last thing it handled (io_loop.hpp), given
  // --spin-us: `spin` while the pool works on no client's answer; while it works on exactly
  // one (a completion being written, a wait's batch being built), long enough to take that
  // answer without being woken (lone_answer_spin: a completion's answer comes after one
  // fdatasync, which on a local disk ends within it); while it works on several, none (the pool's threads need the
  // CPUs of a small machine). Zero when `spin` is.
  std::chrono::microseconds polling_window(std::chrono::microseconds spin) const noexcept;
  static constexpr std::chrono::microseconds lone_answer_spin{2000};

 private:
  // A method's one handler, as the table holds it: it decodes the params from the request (the
  // request's own: a decoder may move a member out, a finalText of up to 64 MiB) and runs the
  // handler once, which answers at once or gives the coroutine that will.
  using method_outcome = std::variant<encoded_reply, asio::awaitable<encoded_reply>>;
  using method = std::function<method_outcome(const caller&, rpc::incoming&)>;
  // Binds a method (protocol/methods.hpp) to a member handler typed by it: the params type
  // decodes the request (-32602 naming the field), and the handler returns the method's Result,
  // which the table encodes; a handler of other types, or a daemon -> client method, does not
  // compile. Its return type says, once, how it runs: `reply<Result>` at once on the I/O thread;
  // `asio::awaitable<reply<Result>>` as a coroutine of its own (taking its caller by value);
  // `now_or_later<Result>` at once when it can, else the coroutine it returns. A notification's
  // handler answers at once and returns nothing.
  template <class Params, class Result, class Answer, class Caller>
    requires handles<Answer, Caller, Result>
  void bind(const rpc::request_type<Params, Result>& m, Answer (service::*h)(Caller, Params));
  template <class Params>
  void bind(const rpc::notification_type<Params>& m, void (service::*h)(const caller&, Params));

  // Where a request's one reply goes: none for a notification. `method` names the table's key.
  struct addressee {
    caller from;
    std::string_view method;
    bool notification = false;
  };
  // Dispatch (dispatch.cpp): the method `in` names, or nullptr once the error was answered
  // (unknown method, shutting down); the coroutine that answers a request whose handler waits;
  // and the one place a request's outcome becomes its reply.
  const method* route(addressee& to, rpc::incoming& in) const;
  asio::awaitable<void> answer_later(addressee to, asio::awaitable<encoded_reply> work) const;
  void answer(const addressee& to, encoded_reply r) const;
  void answer_error(const addressee& to, rpc::errc code, const std::string& text,
                    const nlohmann::json& data = nullptr) const;
  void answer_failure(const addressee& to, std::exception_ptr failure) const;

  reply<rpc::initialize_result> initialize(const caller& from, rpc::initialize_params p);
  reply<rpc::started_result> started(const caller& from, rpc::started_params p);
  void progress(const caller& from, rpc::progress_params p);
  asio::awaitable<reply<rpc::completed_result>> completed(caller from, rpc::completed_params p);  // completed.cpp
  asio::awaitable<reply<rpc::check_result>> check(caller from, rpc::check_params p);
  asio::awaitable<reply<rpc::wait_result>> wait(caller from, rpc::wait_params p);             // wait.cpp
  asio::awaitable<reply<rpc::cancel_result>> cancel(caller from, rpc::cancel_params p);
  void parent_state(const caller& from, rpc::parent_state_params p);
  void cancel_request(const caller& from, rpc::cancel_request_params p);
  asio::awaitable<reply<rpc::artifact_read_result>> artifact_read(caller from, rpc::artifact_read_params p);
  // daemon/status (status_method.cpp): at once while no queue removal runs and the store
  // listing is current, else after waiting for both (status_later).
  now_or_later<rpc::status_result> status(const caller& from, rpc::status_params p);
  asio::awaitable<reply<rpc::status_result>> status_later();
  rpc::status_result status_with(rpc::store_status store) const;
  asio::awaitable<reply<rpc::gc_result>> gc(caller from, rpc::gc_params p);                // gc_method.cpp

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
  std::map<std::string, method, std::less<>> methods_;  // the method table, by name
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
