// From a parsed message to exactly one reply: the method table's lookup, the two ways a
// handler runs (at once on the I/O thread, or as a coroutine of its own), and the one place an
// outcome becomes a result or an error. Notifications get no reply, not even an error.
#include <spdlog/spdlog.h>

#include "service.hpp"

namespace handoff::daemon {

using nlohmann::json;
using rpc::errc;
using rpc::rpc_error;

const service::method* service::route(connection& conn, const rpc::message& msg) const {
  auto it = methods_.find(msg.method);
  if (it == methods_.end()) {
    answer_error(conn, msg, errc::method_not_found, "unknown method '" + msg.method + "'");
    return nullptr;
  }
  if (stopping_) {
    answer_error(conn, msg, errc::shutting_down, "handoffd is shutting down; retry once it is back");
    return nullptr;
  }
  return &it->second;
}

bool service::answer_now(const std::shared_ptr<connection>& conn, const rpc::message& msg) {
  const method* m = route(*conn, msg);
  if (m == nullptr) return true;
  if (!m->now) return false;
  std::optional<encoded_reply> r;
  try {
    r = m->now(conn, msg.params);
  } catch (...) {
    answer_failure(*conn, msg, std::current_exception());
    return true;
  }
  if (!r) return false;
  answer(*conn, msg, std::move(*r));
  return true;
}

bool service::answer_now(const std::shared_ptr<connection>& conn, const rpc::request_text& request) {
  if (stopping_) return false;  // route() answers it
  const auto it = methods_.find(request.method);
  if (it == methods_.end() || !it->second.now_text) return false;
  std::optional<encoded_reply> r;
  try {
    r = it->second.now_text(conn, request.params);
  } catch (...) {
    rpc::message msg;  // what answer_failure needs of it
    msg.id = request.id;
    msg.method = request.method;
    answer_failure(*conn, msg, std::current_exception());
    return true;
  }
  if (!r) return false;  // params the typed reader declined, or a reply that must wait
  conn->send(rpc::make_encoded_response(request.id, r->result), std::move(r->on_written));
  return true;
}

asio::awaitable<void> service::on_message(std::shared_ptr<connection> conn_param, rpc::message msg_param) {
  // Locals, not parameters, are what the code below refers to (see offload.hpp).
  const std::shared_ptr<connection> conn = std::move(conn_param);
  rpc::message msg = std::move(msg_param);  // not const: a decoder may take its params' text
  const method* m = route(*conn, msg);
  if (m == nullptr) co_return;
  // Exactly one reply per request: every path below ends in answer() or answer_failure().
  encoded_reply r;
  std::exception_ptr failure;
  try {
    std::optional<encoded_reply> at_once;
    if (m->now) at_once = m->now(conn, msg.params);
    if (at_once) {
      r = std::move(*at_once);
    } else {
      if (!m->later) throw std::logic_error(msg.method + " could not be answered at once");
      r = co_await m->later(conn, msg.params, msg.id);
    }
  } catch (...) {
    failure = std::current_exception();
  }
  if (failure) {
    answer_failure(*conn, msg, failure);
    co_return;
  }
  answer(*conn, msg, std::move(r));
}

void service::answer(connection& conn, const rpc::message& msg, encoded_reply r) const {
  if (msg.type == rpc::message::kind::notification) return;
  conn.send(rpc::make_encoded_response(msg.id, r.result), std::move(r.on_written));
}

void service::answer_error(connection& conn, const rpc::message& msg, errc code, const std::string& text,
                           const json& data) const {
  if (msg.type == rpc::message::kind::notification) {
    spdlog::debug("connection {}: notification {} failed: {}", conn.id(), msg.method, text);
    return;
  }
  conn.send(rpc::make_error(msg.id, code, text, data));
}

void service::answer_failure(connection& conn, const rpc::message& msg, std::exception_ptr failure) const {
  // Errors are values at the edge: a handler's rpc_error as it is, anything else -32603, logged.
  try {
    std::rethrow_exception(failure);
  } catch (const rpc_error& e) {
    answer_error(conn, msg, e.code, e.what(), e.data);
  } catch (const std::exception& e) {
    spdlog::error("connection {}: {} failed unexpectedly: {}", conn.id(), msg.method, e.what());
    answer_error(conn, msg, errc::internal_error, std::string("internal error: ") + e.what());
  } catch (...) {
    spdlog::error("connection {}: {} failed unexpectedly (not a std::exception)", conn.id(), msg.method);
    answer_error(conn, msg, errc::internal_error, "internal error");
  }
}

}  // namespace handoff::daemon
