#include "connection.hpp"

#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/experimental/as_tuple.hpp>
#include <asio/read.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/write.hpp>
#include <spdlog/spdlog.h>

#include "config.hpp"

namespace handoff::daemon {
namespace {

using asio::use_awaitable;
constexpr auto as_tuple = asio::experimental::as_tuple(asio::use_awaitable);

// Requests one connection may have running at once; more get `overloaded` (bounded memory).
constexpr std::size_t max_requests_in_flight = 128;
// Bytes read from the socket per read call.
constexpr std::size_t read_chunk_bytes = 64 * 1024;

}  // namespace

connection::connection(socket_type socket, const config& cfg, message_sink& sink, std::uint64_t id)
    : socket_(std::move(socket)),
      cfg_(cfg),
      sink_(sink),
      id_(id),
      decoder_(cfg.max_frame_bytes),
      wake_writer_(socket_.get_executor()),
      watchdog_timer_(socket_.get_executor()) {
  wake_writer_.expires_at(std::chrono::steady_clock::time_point::max());
}

connection::~connection() = default;

void connection::start() {
  auto self = shared_from_this();
  // send() writes directly when the outbox is empty; that write must never block the I/O
  // thread (asio's async operations work the same in either mode).
  asio::error_code ec;
  socket_.non_blocking(true, ec);
  if (ec) spdlog::warn("connection {}: cannot make the socket non-blocking: {}", id_, ec.message());
  asio::co_spawn(socket_.get_executor(), [self] { return self->read_loop(); }, asio::detached);
  asio::co_spawn(socket_.get_executor(), [self] { return self->write_loop(); }, asio::detached);
  asio::co_spawn(socket_.get_executor(), [self] { return self->watchdog(); }, asio::detached);
}

void connection::close(std::string_view why) {
  if (!open_) return;
  open_ = false;
  spdlog::debug("connection {}: closed ({})", id_, why);
  asio::error_code ignored;
  socket_.shutdown(socket_type::shutdown_both, ignored);
  socket_.close(ignored);
  wake_writer_.cancel();
  watchdog_timer_.cancel();
  for (auto& out : outbox_)
    if (out.on_written) out.on_written(false);
  outbox_.clear();
  outbox_bytes_ = 0;
  finish_calls(call_outcome::kind::closed, "connection closed");
  sink_.on_closed(shared_from_this());
}

void connection::close_after_drain() {
  if (!open_) return;
  draining_ = true;
  asio::error_code ignored;
  socket_.shutdown(socket_type::shutdown_receive, ignored);
  close_if_drained();
}

void connection::close_if_drained() {
  // Half-closed or shutting down: every request read so far still gets its reply.
  if (open_ && draining_ && outbox_.empty() && requests_in_flight_ == 0) close("drained");
}

void connection::send(std::string payload, std::function<void(bool)> on_written) {
  if (!open_) {
    if (on_written) on_written(false);
    return;
  }
  std::string bytes = rpc::encode_frame(payload, decoder_.mode());
  if (outbox_.empty()) {  // no write in progress (the writer keeps its frame queued while writing)
    const auto written = write_now(bytes);
    if (!written) {
      if (on_written) on_written(false);
      return;
    }
    if (*written == bytes.size()) {
      if (on_written) on_written(true);
      if (draining_) wake_writer_.cancel_one();  // the writer closes a drained connection
      return;
    }
    bytes.erase(0, *written);  // the writer sends the rest
  }
  if (outbox_bytes_ + bytes.size() > cfg_.max_outbox_bytes && !outbox_.empty()) {
    spdlog::warn("connection {}: outbox over {} bytes (client not reading); dropping it", id_,
                 cfg_.max_outbox_bytes);
    if (on_written) on_written(false);
    close("outbox full");
    return;
  }
  outbox_bytes_ += bytes.size();
  outbox_.push_back({std::move(bytes), std::move(on_written)});
  wake_writer_.cancel_one();
}

std::optional<std::size_t> connection::write_now(std::string_view bytes) {
  asio::error_code ec;
  const std::size_t n = socket_.write_some(asio::buffer(bytes.data(), bytes.size()), ec);
  if (ec == asio::error::would_block || ec == asio::error::try_again) return 0;
  if (ec) {
    close(ec.message());
    return std::nullopt;
  }
  return n;
}

asio::awaitable<bool> connection::send_and_wait(std::string payload) {
  asio::steady_timer done(socket_.get_executor(), std::chrono::steady_clock::time_point::max());
  std::optional<bool> written;
  // The callback may run after this frame is gone only if the connection outlives it, which
  // cannot happen: close() and the writer call it before we resume.
  send(std::move(payload), [&written, &done](bool ok) {
    written = ok;
    done.cancel();
  });
  while (!written) co_await done.async_wait(as_tuple);
  co_return *written;
}

asio::awaitable<call_outcome> connection::call(std::string_view method, const nlohmann::json& params,
                                               std::chrono::milliseconds timeout) {
  if (!open_) co_return call_outcome{call_outcome::kind::closed, nullptr, "connection closed"};
  const std::int64_t call_id = next_call_id_++;
  pending_call pending{asio::steady_timer(socket_.get_executor()), std::nullopt};
  pending.timer.expires_after(timeout);
  calls_.emplace(call_id, &pending);
  send(rpc::make_request(call_id, method, params));
  co_await pending.timer.async_wait(as_tuple);
  calls_.erase(call_id);
  if (pending.outcome) co_return std::move(*pending.outcome);
  co_return call_outcome{call_outcome::kind::timeout, nullptr,
                         "no reply within " + std::to_string(timeout.count()) + " ms"};
}

void connection::finish_calls(call_outcome::kind how, std::string_view why) {
  for (auto& [call_id, pending] : calls_) {
    pending->outcome = call_outcome{how, nullptr, std::string(why)};
    pending->timer.cancel();
  }
}

asio::awaitable<void> connection::read_loop() {
  auto self = shared_from_this();
  std::string chunk(read_chunk_bytes, '\0');
  while (open_ && !draining_) {
    auto [ec, n] = co_await socket_.async_read_some(asio::buffer(chunk), as_tuple);
    if (ec == asio::error::eof) {  // the client finished sending; answer what it asked
      draining_ = true;
      sink_.on_input_closed(self);
      close_if_drained();
      co_return;
    }
    if (ec) {
      if (!draining_) close(ec.message());
      co_return;
    }
    decoder_.feed(std::string_view(chunk.data(), n));
    try {
      while (open_) {
        auto frame = decoder_.next();
        if (!frame) break;
        handle_frame(std::move(*frame));
      }
    } catch (const std::exception& e) {  // a malformed header block: the stream is lost
      send(rpc::make_error(nullptr, rpc::errc::parse_error, e.what()));
      close_after_drain();
      co_return;
    }
    const bool was_partial = partial_since_ != std::chrono::steady_clock::time_point{};
    partial_since_ = !decoder_.in_frame() ? std::chrono::steady_clock::time_point{}
                     : was_partial        ? partial_since_
                                          : std::chrono::steady_clock::now();
    if (!was_partial && decoder_.in_frame()) watchdog_timer_.cancel();  // a frame started: set its deadline
  }
}

void connection::handle_frame(rpc::decoded_frame frame) {
  // Any complete frame restarts the slow-frame clock.
  partial_since_ = {};
  if (frame.oversized) {
    send(rpc::make_error(nullptr, rpc::errc::frame_too_large,
                         "frame of " + std::to_string(frame.oversized_bytes) + " bytes exceeds the " +
                             std::to_string(cfg_.max_frame_bytes) + "-byte cap; it was skipped"));
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
  // Most small requests end here, answered and written before the next frame is read; they
  // are never in flight, so the cap below does not apply to them.
  if (sink_.answer_now(shared_from_this(), msg)) return;
  if (requests_in_flight_ >= max_requests_in_flight) {
    if (msg.type == rpc::message::kind::request)
      send(rpc::make_error(msg.id, rpc::errc::overloaded,
                           "more than " + std::to_string(max_requests_in_flight) +
                               " requests in flight on this connection"));
    return;
  }
  ++requests_in_flight_;
  std::string id_key;  // a request is cancellable from now on; a notification never is
  if (msg.type == rpc::message::kind::request) {
    id_key = msg.id.dump();
    ++cancellable_[id_key].count;
  }
  asio::co_spawn(socket_.get_executor(), serve(std::move(msg), std::move(id_key)), asio::detached);
}

asio::awaitable<void> connection::serve(rpc::message msg, std::string id_key) {
  auto self = shared_from_this();
  rpc::message request = std::move(msg);
  const std::string key = std::move(id_key);
  co_await sink_.on_message(self, std::move(request));
  if (const auto it = cancellable_.find(key); !key.empty() && it != cancellable_.end() && --it->second.count == 0)
    cancellable_.erase(it);
  --requests_in_flight_;
  close_if_drained();
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
    it->second->outcome = call_outcome{call_outcome::kind::error_reply, nullptr, text};
  } else {
    it->second->outcome = call_outcome{call_outcome::kind::result, msg.result, {}};
  }
  it->second->timer.cancel();
}

asio::awaitable<void> connection::write_loop() {
  auto self = shared_from_this();
  while (open_) {
    if (outbox_.empty()) {
      close_if_drained();
      if (!open_) co_return;
      co_await wake_writer_.async_wait(as_tuple);
      continue;
    }
    auto [ec, n] = co_await asio::async_write(socket_, asio::buffer(outbox_.front().bytes), as_tuple);
    if (ec || !open_) {
      close(ec ? ec.message() : "closed");
      co_return;
    }
    outgoing done = std::move(outbox_.front());
    outbox_.pop_front();
    outbox_bytes_ -= done.bytes.size();
    if (done.on_written) done.on_written(true);
  }
}

asio::awaitable<void> connection::watchdog() {
  // Asleep while no frame is partly read (the reader wakes it when one starts), so an idle
  // connection costs the I/O thread no wake-ups; otherwise until that frame's deadline.
  auto self = shared_from_this();
  const auto limit = std::chrono::milliseconds(cfg_.frame_timeout_ms);
  while (open_) {
    const bool partial = partial_since_ != std::chrono::steady_clock::time_point{};
    if (partial && std::chrono::steady_clock::now() - partial_since_ > limit) {
      spdlog::warn("connection {}: a frame took over {} ms to arrive; closing", id_, limit.count());
      send(rpc::make_error(nullptr, rpc::errc::request_timeout, "frame not completed in time"));
      close_after_drain();
      co_return;
    }
    watchdog_timer_.expires_at(partial ? partial_since_ + limit + std::chrono::milliseconds(1)
                                       : std::chrono::steady_clock::time_point::max());
    co_await watchdog_timer_.async_wait(as_tuple);
  }
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
