#include "net/connection.hpp"

#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/use_awaitable.hpp>
#include <spdlog/spdlog.h>

#include "runtime/as_tuple.hpp"
#include "config.hpp"

namespace handoff::daemon {
namespace {

using asio::use_awaitable;

// Requests one connection may have running at once; more get `overloaded` (bounded memory).
constexpr std::size_t max_requests_in_flight = 128;

}  // namespace

connection::connection(socket_type socket, const config& cfg, message_sink& sink, std::uint64_t id)
    : transport_(std::move(socket), cfg, *this, id), cfg_(cfg), sink_(sink), id_(id) {}

connection::~connection() = default;

void connection::start() { transport_.start(shared_from_this()); }

void connection::close(std::string_view why) { transport_.close(why); }

void connection::close_after_drain() { transport_.close_after_drain(); }

void connection::send(std::string payload, std::function<void(bool)> on_written) {
  transport_.send(std::move(payload), std::move(on_written));
}

asio::awaitable<bool> connection::send_and_wait(std::string payload) {
  return transport_.send_and_wait(std::move(payload));  // not a coroutine: the transport's awaitable
}

void connection::on_closed() {
  finish_calls(call_error::kind::closed, "connection closed");
  sink_.on_closed(shared_from_this());
}

void connection::on_input_closed() { sink_.on_input_closed(shared_from_this()); }

void connection::on_stream_error(rpc::errc code, const std::string& message) {
  send(rpc::make_error(nullptr, code, message));
  close_after_drain();
}

bool connection::busy() const { return requests_in_flight_ != 0; }

asio::awaitable<call_outcome<nlohmann::json>> connection::call_text(std::string_view method, std::string_view params,
                                                                     std::chrono::milliseconds timeout) {
  if (!transport_.is_open()) co_return call_error{call_error::kind::closed, "connection closed"};
  const std::int64_t call_id = next_call_id_++;
  pending_call pending{asio::steady_timer(transport_.executor()), std::nullopt};
  pending.timer.expires_after(timeout);
  calls_.emplace(call_id, &pending);
  send(rpc::make_encoded_request(call_id, method, params));
  co_await pending.timer.async_wait(as_tuple);
  calls_.erase(call_id);
  if (pending.outcome) co_return std::move(*pending.outcome);
  co_return call_error{call_error::kind::timeout, "no reply within " + std::to_string(timeout.count()) + " ms"};
}

void connection::finish_calls(call_error::kind how, std::string_view why) {
  for (auto& [call_id, pending] : calls_) {
    pending->outcome = call_error{how, std::string(why)};
    pending->timer.cancel();
  }
}

void connection::on_frame(rpc::decoded_frame frame) {
  if (frame.oversized) {
    send(rpc::make_error(nullptr, rpc::errc::frame_too_large,
                         "frame of " + std::to_string(frame.oversized_bytes) + " bytes exceeds the " +
                             std::to_string(cfg_.max_frame_bytes) + "-byte cap; it was skipped"));
    return;
  }
  // Most requests are small and written as clients write them: read without a json, which
  // their method's decoder may never need.
  if (const auto text = rpc::read_request_text(frame.payload)) {
    rpc::incoming in(frame.payload, *text, rpc::parse_limits{cfg_.max_depth});
    dispatch(in);
    return;
  }
  rpc::message msg;
  try {
    msg = rpc::parse_message(frame.payload, rpc::parse_limits{cfg_.max_depth});
  } catch (const rpc::rpc_error& e) {
    nlohmann::json id = (e.data.is_object() && e.data.contains("id")) ? e.data["id"] : nlohmann::json();
    send(rpc::make_error(id, e.code, e.what()));
    return;
  }
  if (msg.type == rpc::message::kind::response) {
    handle_response(msg);
    return;
  }
  rpc::incoming in(std::move(msg));
  dispatch(in);
}

void connection::dispatch(rpc::incoming& in) {
  // Most small requests end here, answered and written before the next frame is read; they
  // are never in flight, so the cap below does not apply to them.
  std::optional<asio::awaitable<void>> answering = sink_.on_request(shared_from_this(), in);
  if (!answering) return;
  // Dropping the coroutine unstarted drops the request: its handler has not run.
  if (requests_in_flight_ >= max_requests_in_flight) {
    if (!in.is_notification())
      send(rpc::make_error(in.id(), rpc::errc::overloaded,
                           "more than " + std::to_string(max_requests_in_flight) +
                               " requests in flight on this connection"));
    return;
  }
  ++requests_in_flight_;
  std::string id_key;  // a request is cancellable from now on; a notification never is
  if (!in.is_notification()) {
    id_key = in.id().dump();
    ++cancellable_[id_key].count;
  }
  asio::co_spawn(transport_.executor(), serve(std::move(*answering), std::move(id_key)), asio::detached);
}

asio::awaitable<void> connection::serve(asio::awaitable<void> answering, std::string id_key) {
  auto self = shared_from_this();
  asio::awaitable<void> request = std::move(answering);
  const std::string key = std::move(id_key);
  co_await std::move(request);
  if (const auto it = cancellable_.find(key); !key.empty() && it != cancellable_.end() && --it->second.count == 0)
    cancellable_.erase(it);
  --requests_in_flight_;
  transport_.close_if_drained();
}

void connection::handle_response(const rpc::message& msg) {
  if (!msg.id.is_number_integer()) return;  // not one of ours: our ids are integers
  auto it = calls_.find(msg.id.get<std::int64_t>());
  if (it == calls_.end()) {
    spdlog::debug("connection {}: reply to unknown or expired call {}", id_, msg.id.dump());
    return;
  }
  if (msg.error) {
    std::string text = msg.error->value("message", std::string("error"));
    it->second->outcome = call_error{call_error::kind::error_reply, std::move(text)};
  } else {
    it->second->outcome = msg.result;
  }
  it->second->timer.cancel();
}

connection::cancel_registration connection::on_cancel(const nlohmann::json& request_id, std::function<void()> cancel) {
  if (request_id.is_null()) return {};  // a notification cannot be cancelled
  std::string key = request_id.dump();
  const auto it = cancellable_.find(key);
  if (it == cancellable_.end()) return {};  // not a request of ours in flight: nothing can reach it
  if (std::exchange(it->second.cancelled, false)) {  // cancelled before it got here: at once
    cancel();
    return {};
  }
  const std::uint64_t token = next_cancel_token_++;
  it->second.token = token;  // an id reused while in flight: the newest
  it->second.cancel = std::move(cancel);
  return {weak_from_this(), std::move(key), token};
}

void connection::cancel(const nlohmann::json& request_id) {
  const auto it = cancellable_.find(request_id.dump());
  if (it == cancellable_.end()) return;  // answered already, or never asked
  cancellable& c = it->second;
  if (c.token == 0) {
    c.cancelled = true;  // not registered yet: kept until it registers or ends
    return;
  }
  auto run = std::move(c.cancel);
  c.cancel = nullptr;
  c.token = 0;
  run();
}

connection::cancel_registration& connection::cancel_registration::operator=(cancel_registration&& other) noexcept {
  if (this != &other) {
    release();
    conn_ = std::move(other.conn_);
    key_ = std::move(other.key_);
    token_ = std::exchange(other.token_, 0);
  }
  return *this;
}

void connection::cancel_registration::release() noexcept {
  if (token_ == 0) return;
  if (auto conn = conn_.lock()) {
    const auto it = conn->cancellable_.find(key_);
    if (it != conn->cancellable_.end() && it->second.token == token_) {
      it->second.token = 0;
      it->second.cancel = nullptr;
    }
  }
  token_ = 0;
}

}  // namespace handoff::daemon
