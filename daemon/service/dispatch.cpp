// From a read request to exactly one reply, on one road: the method table is looked up once,
// the method's one handler decodes the params and runs once, answering at once on the I/O thread
// or giving the coroutine that answers; every outcome becomes a result or an error in one place.
// Notifications get no reply, not even an error.
#include <spdlog/spdlog.h>

#include "service.hpp"

namespace handoff::daemon {

using nlohmann::json;
using rpc::errc;
using rpc::rpc_error;

std::optional<asio::awaitable<void>> service::on_request(const std::shared_ptr<connection>& conn, rpc::incoming& in) {
  addressee to{caller{conn, in.id()}, in.method(), in.is_notification()};
  const method* m = route(to, in);
  if (m == nullptr) return std::nullopt;
  // Exactly one reply per request: answered here, or by answer_later() once it has run.
  try {
    method_outcome o = (*m)(to.from, in);
    if (auto* now = std::get_if<encoded_reply>(&o)) {
      answer(to, std::move(*now));
      return std::nullopt;
    }
    return answer_later(std::move(to), std::get<asio::awaitable<encoded_reply>>(std::move(o)));
  } catch (...) {
    to.from.id = in.id();  // a frame found not to be JSON-RPC only now has the id of its error
    answer_failure(to, std::current_exception());
    return std::nullopt;
  }
}

const service::method* service::route(addressee& to, rpc::incoming& in) const {
  const auto it = methods_.find(to.method);
  if (it != methods_.end() && !stopping_) {
    to.method = it->first;  // the table's: a coroutine's reply outlives the frame
    return &it->second;
  }
  // A frame that is not JSON-RPC is answered as such before its method is looked at.
  try {
    in.parsed();
  } catch (...) {
    to.from.id = in.id();
    answer_failure(to, std::current_exception());
    return nullptr;
  }
  if (it == methods_.end())
    answer_error(to, errc::method_not_found, "unknown method '" + std::string(to.method) + "'");
  else
    answer_error(to, errc::shutting_down, "handoffd is shutting down; retry once it is back");
  return nullptr;
}

asio::awaitable<void> service::answer_later(addressee to_param, asio::awaitable<encoded_reply> work_param) const {
  // Locals, not parameters, are what the code below refers to (see offload.hpp).
  const addressee to = std::move(to_param);
  asio::awaitable<encoded_reply> work = std::move(work_param);
  encoded_reply r;
  std::exception_ptr failure;
  try {
    r = co_await std::move(work);
  } catch (...) {
    failure = std::current_exception();
  }
  if (failure) {
    answer_failure(to, failure);
    co_return;
  }
  answer(to, std::move(r));
}

void service::answer(const addressee& to, encoded_reply r) const {
  if (to.notification) return;
  to.from.conn->send(rpc::make_encoded_response(to.from.id, r.result), std::move(r.on_written));
}

void service::answer_error(const addressee& to, errc code, const std::string& text, const json& data) const {
  if (to.notification) {
    spdlog::debug("connection {}: notification {} failed: {}", to.from.conn->id(), to.method, text);
    return;
  }
  to.from.conn->send(rpc::make_error(to.from.id, code, text, data));
}

void service::answer_failure(const addressee& to, std::exception_ptr failure) const {
  // Errors are values at the edge: a handler's rpc_error as it is, anything else -32603, logged.
  try {
    std::rethrow_exception(failure);
  } catch (const rpc_error& e) {
    answer_error(to, e.code, e.what(), e.data);
  } catch (const std::exception& e) {
    spdlog::error("connection {}: {} failed unexpectedly: {}", to.from.conn->id(), to.method, e.what());
    answer_error(to, errc::internal_error, std::string("internal error: ") + e.what());
  } catch (...) {
    spdlog::error("connection {}: {} failed unexpectedly (not a std::exception)", to.from.conn->id(), to.method);
    answer_error(to, errc::internal_error, "internal error");
  }
}

}  // namespace handoff::daemon
