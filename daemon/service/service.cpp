#include "service.hpp"

#include <algorithm>
#include <utility>

#include <asio/steady_timer.hpp>
#include <spdlog/spdlog.h>

#include "engine/fs/sha256.hpp"
#include "engine/text/text_page.hpp"
#include "runtime/offload.hpp"
#include "ledger/preview.hpp"
#include "upkeep/legacy_store.hpp"
#include "upkeep/store_hygiene.hpp"
#include "system/version.hpp"

namespace handoff::daemon {

using nlohmann::json;
using rpc::errc;
using rpc::rpc_error;

namespace {

// A handler's typed reply as the dispatcher sends it.
template <class Result>
encoded_reply encoded(reply<Result> r) {
  return encoded_reply{rpc::encode_result_text(r.result), std::move(r.on_written)};
}

template <class Result>
asio::awaitable<encoded_reply> encoded_later(asio::awaitable<reply<Result>> work_param) {
  asio::awaitable<reply<Result>> work = std::move(work_param);
  reply<Result> r = co_await std::move(work);
  co_return encoded(std::move(r));
}

// A method's params from its request. A handler that answers on the I/O thread reads them
// straight from the frame's text where the typed reader takes them: there the json would be
// most of a small request's cost. Otherwise (the reader declined them, or the frame was parsed
// already) and for a coroutine's they are decoded from the parsed message, whose members are
// moved out, not copied: a finalText is read once, by the parser.
template <class Params>
Params decode(rpc::incoming& in, const rpc::wire_limits& lim, bool from_text) {
  if (const auto text = in.params_text(); text && from_text) {
    Params typed{};
    if (rpc::read_params_text(*text, lim, typed)) return typed;
  }
  return rpc::decode_params<Params>(std::move(in.parsed().params), lim);
}

}  // namespace

template <class Params, class Result, class Answer, class Caller>
  requires handles<Answer, Caller, Result>
void service::bind(const rpc::request_type<Params, Result>& m, Answer (service::*h)(Caller, Params)) {
  methods_[std::string(m.name)] = [this, h](const caller& from, rpc::incoming& in) -> method_outcome {
    if constexpr (std::same_as<Answer, asio::awaitable<reply<Result>>>) {
      // The coroutine copies its caller and takes the params; its body runs once spawned.
      Params typed = decode<Params>(in, cfg_.wire, false);
      return encoded_later((this->*h)(from, std::move(typed)));
    } else if constexpr (std::same_as<Answer, reply<Result>>) {
      return encoded((this->*h)(from, decode<Params>(in, cfg_.wire, true)));
    } else {
      Answer a = (this->*h)(from, decode<Params>(in, cfg_.wire, true));
      if (auto* now = std::get_if<reply<Result>>(&a)) return encoded(std::move(*now));
      return encoded_later(std::get<asio::awaitable<reply<Result>>>(std::move(a)));
    }
  };
}

template <class Params>
void service::bind(const rpc::notification_type<Params>& m, void (service::*h)(const caller&, Params)) {
  methods_[std::string(m.name)] = [this, h](const caller& from, rpc::incoming& in) -> method_outcome {
    (this->*h)(from, decode<Params>(in, cfg_.wire, true));
    return encoded_reply{};  // a notification's: never sent (answer()); null when sent as a request
  };
}

service::service(const config& cfg, asio::io_context& io, asio::thread_pool& pool, artifact_store& store,
                 pending_queue& queue)
    : cfg_(cfg),
      io_(io),
      pool_(pool),
      store_(store),
      queue_(queue),
      ledger_(std::chrono::milliseconds(cfg.forget_after_ms)),
      connections_(io.get_executor()),
      queue_changes_(io.get_executor()),
      pool_answers_(io.get_executor()),
      forget_timer_(io),
      batches_(cfg, pool, queue, store),
      deliveries_(cfg, io, pool, queue, ledger_, batches_, queue_changes_,
                  [this](const std::string& parent_id) { return endpoint_of(parent_id); }) {
  store_listing_.watch(store_.dir());
  // The method table, in one place (docs/protocol.md §6-7; docs/design.md §11). How each
  // handler runs is its return type's (service.hpp): at once on the I/O thread, answered as the
  // frame is read and written at once when the outbox is empty (initialize, subagent/started,
  // the notifications; daemon/status when it has nothing to wait for), or as a coroutine that
  // may wait for the disk, the pool or events.
  namespace m = rpc::methods;
  bind(m::initialize, &service::initialize);
  bind(m::subagent_started, &service::started);
  bind(m::subagent_progress, &service::progress);
  bind(m::subagent_completed, &service::completed);
  bind(m::subagent_check, &service::check);
  bind(m::subagent_wait, &service::wait);
  bind(m::subagent_cancel, &service::cancel);
  bind(m::parent_state, &service::parent_state);
  bind(m::cancel_request, &service::cancel_request);
  bind(m::artifact_read, &service::artifact_read);
  bind(m::daemon_status, &service::status);
  bind(m::daemon_gc, &service::gc);
}

std::chrono::microseconds service::polling_window(std::chrono::microseconds spin) const noexcept {
  switch (pool_answers_.count()) {
    case 0: return spin;
    case 1: return spin.count() == 0 ? spin : std::max(spin, lone_answer_spin);
    default: return std::chrono::microseconds(0);
  }
}

void service::on_closed(const std::shared_ptr<connection>& conn) {
  connections_.done();
  ledger_.detach(conn.get());  // wakes the waits: the one of this connection ends
}

void service::on_input_closed(const std::shared_ptr<connection>&) {
  // Nothing to do: a half-closed client (`socat`, `nc -U`) still gets every reply, waits
  // included; the connection closes once they are written.
}

std::shared_ptr<connection> service::endpoint_of(const std::string& parent_id) const {
  const parent* p = ledger_.find(parent_id);
  if (p == nullptr) return nullptr;
  auto endpoint = std::static_pointer_cast<connection>(p->endpoint.lock());
  return endpoint && endpoint->is_open() ? endpoint : nullptr;
}

reply<rpc::initialize_result> service::initialize(const caller& from, rpc::initialize_params p) {
  const std::shared_ptr<connection>& conn = from.conn;
  if (p.protocol_version != rpc::protocol_version)
    throw rpc_error(errc::invalid_params, "protocolVersion: this daemon speaks \"" +
                                              std::string(rpc::protocol_version) + "\", not \"" +
                                              p.protocol_version + "\"");
  reply<rpc::initialize_result> r;
  rpc::initialize_result& result = r.result;
  result.protocol_version = rpc::protocol_version;
  result.server_version = handoff_version;
  result.artifact_dir = store_.dir().string();
  result.limits = rpc::encode(limits_of(cfg_));
  if (p.parent_id) {
    ledger_.attach(*p.parent_id, conn);
    conn->set_parent_id(*p.parent_id);
    result.parent_id = p.parent_id;
    spdlog::info("connection {}: parent endpoint for '{}' ({})", conn->id(), *p.parent_id, p.client_name);
    // Once the client has our answer, resend what it never acknowledged, then flush if idle.
    const std::string parent_id = *p.parent_id;
    r.on_written = [this, parent_id](bool written) {
      if (written) deliveries_.schedule(parent_id, true);
    };
  }
  return r;
}

reply<rpc::started_result> service::started(const caller&, rpc::started_params p) {
  const child_state state = ledger_.start(p.parent_id, p.child_id, p.title);
  return {rpc::started_result{std::string(to_string(state))}, {}};
}

void service::progress(const caller&, rpc::progress_params p) {
  ledger_.progress(p.parent_id, p.child_id, p.text);
}

asio::awaitable<reply<rpc::check_result>> service::check(caller, rpc::check_params p) {
  rpc::check_result result;
  std::optional<held_result> held;
  std::string progress;
  const child* c = ledger_.find_child(p.parent_id, p.child_id);
  const bool forgotten = c == nullptr && co_await delivered_before(p.parent_id, p.child_id);
  c = ledger_.find_child(p.parent_id, p.child_id);  // again: the ledger may have changed meanwhile
  if (c != nullptr) {
    result.child_id = c->id;
    result.title = c->title;
    result.state = std::string(to_string(c->state));
    if (c->final_status) {
      result.status = std::string(to_string(*c->final_status));
      result.bytes = c->final_bytes;
      result.lines = c->final_lines;
    }
    if (c->held) result.error = c->held->info.error;
    held = c->held;
    progress = c->progress;
  } else if (forgotten) {
    result.child_id = p.child_id;
    result.state = "forgotten";  // delivered, then forgotten after --forget-after-ms
  } else if (ledger_.find(p.parent_id) == nullptr) {
    throw rpc_error(errc::unknown_parent, "unknown parent '" + p.parent_id + "'");
  } else {
    throw rpc_error(errc::unknown_child, "unknown child '" + p.child_id + "' of parent '" + p.parent_id + "'");
  }
  preview pv;
  if (held) {
    auto read_tail = [this, &held] { return make_preview(queue_.open_text(*held).view()); };
    pv = co_await offload(pool_, read_tail);
  } else {
    pv = make_preview(progress);
  }
  result.preview = std::move(pv.text);
  result.preview_truncated = pv.truncated;
  co_return reply<rpc::check_result>{std::move(result), {}};
}

asio::awaitable<reply<rpc::cancel_result>> service::cancel(caller, rpc::cancel_params p) {
  if (ledger_.find(p.parent_id) == nullptr) throw rpc_error(errc::unknown_parent, "unknown parent '" + p.parent_id + "'");
  const ledger::cancel_outcome out = ledger_.cancel(p.parent_id, p.child_ids);
  auto consume = [this, &out] {
    for (const auto& problem : queue_.consume(out.consume))
      spdlog::warn("cancelled results not removed from the queue: {}", problem);
  };
  if (!out.consume.empty()) co_await offload(pool_, consume);
  co_return reply<rpc::cancel_result>{rpc::cancel_result{out.cancelled, out.consume.size()}, {}};
}

void service::parent_state(const caller&, rpc::parent_state_params p) {
  if (ledger_.set_idle(p.parent_id, p.state == "idle")) deliveries_.schedule(p.parent_id);
}

void service::cancel_request(const caller& from, rpc::cancel_request_params p) {
  from.conn->cancel(p.id);  // a wait still asleep answers -32800; anything else goes on as it was
}

asio::awaitable<reply<rpc::artifact_read_result>> service::artifact_read(caller, rpc::artifact_read_params params) {
  const rpc::artifact_read_params p = std::move(params);
  auto read = [this, &p]() -> std::optional<rpc::artifact_read_result> {
    std::filesystem::path path = store_.path_of(p.sha256);
    auto file = store_.open(p.sha256);
    if (!file) {
      // An older footer's artifact, in the former default store (legacy_store.hpp).
      try {
        file = open_legacy_artifact(cfg_.legacy_artifact_dir, p.sha256);
      } catch (const std::exception& e) {
        spdlog::debug("artifact/read: {}", e.what());
      }
      path = cfg_.legacy_artifact_dir / (p.sha256 + ".txt");
    }
    if (!file) return std::nullopt;
    page_request request{p.offset, p.limit};
    text_page page;
    try {
      page = read_page(file->view(), request);
    } catch (const std::out_of_range& e) {
      throw rpc_error(errc::invalid_params, std::string("offset: ") + e.what());
    }
    rpc::artifact_read_result r;
    r.path = path.string();
    r.text = std::move(page.text);
    r.first_line = page.first_line;
    r.last_line = page.last_line;
    r.total_lines = page.total_lines;
    r.cut = page.cut;
    r.next_offset = page.next_offset;
    return r;
  };
  auto result = co_await offload(pool_, read);
  if (!result) throw rpc_error(errc::not_found, "no artifact " + p.sha256 + " in " + store_.dir().string());
  co_return reply<rpc::artifact_read_result>{std::move(*result), {}};
}

}  // namespace handoff::daemon
