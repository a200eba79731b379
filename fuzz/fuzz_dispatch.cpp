// The dispatcher fed one message of raw bytes (deep nesting, huge numbers, invalid UTF-8,
// duplicate keys...), at two depths:
//
// 1. The protocol layer, pure: parse_json (the capped parser) -> parse_message -> every
//    method's typed params decoder. Each step either succeeds or throws rpc_error with a code
//    it may throw; what it accepted is valid UTF-8 JSON that re-parses to itself, decoded
//    params re-encode and decode to the same values, and the replies we would build are valid
//    JSON-RPC.
// 2. The daemon, in-process: the bytes as one Content-Length frame on a socketpair to a real
//    `connection` and `service` on an io_context, with a fresh artifact store and durable queue
//    in a temp dir (on /dev/shm when there is one) that already holds two completed results of
//    parent "p" (children "c2", a 1,000-line text that a wait must cut, and "c3"). Every reply
//    must be valid JSON-RPC: exactly one per request, to its id; none for notifications and
//    responses; error codes from docs/protocol.md section 10, and never -32603 (an unexpected
//    exception in a handler is a bug).
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <future>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/experimental/as_tuple.hpp>
#include <asio/io_context.hpp>
#include <asio/local/connect_pair.hpp>
#include <asio/local/stream_protocol.hpp>
#include <asio/post.hpp>
#include <asio/thread_pool.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/write.hpp>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "config.hpp"
#include "net/connection.hpp"
#include "engine/store/artifact_store.hpp"
#include "engine/queue/pending_queue.hpp"
#include "protocol/framing.hpp"
#include "protocol/json_parse.hpp"
#include "protocol/jsonrpc.hpp"
#include "protocol/messages.hpp"
#include "service/service.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using handoff::rpc::errc;
using handoff::rpc::rpc_error;

constexpr std::size_t max_depth = 64;  // handoffd's default --max-depth

[[noreturn]] void broken(const std::string& what) {
  std::fprintf(stderr, "fuzz_dispatch: invariant broken: %s\n", what.c_str());
  std::abort();
}

void require(bool ok, const std::string& what) {
  if (!ok) broken(what);
}

bool documented(int code) {
  static const std::set<int> codes = {-32700, -32600, -32601, -32602, -32603, -32001, -32002, -32003,
                                      -32004, -32005, -32006, -32007, -32008, -32009, -32010};
  return codes.contains(code);
}

// ---- 1. the protocol layer ------------------------------------------------------------------

// Serializes strictly (throws on invalid UTF-8): what the parser accepted must be valid.
std::string strict_dump(const json& j) {
  try {
    return j.dump();
  } catch (const json::exception& e) {
    broken(std::string("the parser accepted what cannot be dumped: ") + e.what());
  }
}

// A decoder either returns typed params or throws invalid_params naming a field.
template <class Decode>
void decode_or_field_error(Decode&& decode, const char* method) {
  try {
    decode();
  } catch (const rpc_error& e) {
    require(e.code == errc::invalid_params, std::string(method) + ": decoder threw a non -32602 code");
    require(e.data.is_object() && e.data.contains("field") && e.data["field"].is_string(),
            std::string(method) + ": -32602 without data.field");
  }
}

// decode(encode(decode(x))) == decode(x): the encoders and decoders agree on the wire form.
template <class Params>
void round_trip(const json& params, const handoff::rpc::wire_limits& lim, const char* method) {
  const auto decode = [&](const json& p) { return handoff::rpc::decode_params<Params>(p, lim); };
  std::optional<Params> first;
  try {
    first = decode(params);
  } catch (const rpc_error&) {
    return;
  }
  const json again = handoff::rpc::encode(*first);
  Params second;
  try {
    second = decode(again);
  } catch (const rpc_error& e) {
    broken(std::string(method) + ": re-encoded params refused: " + e.what());
  }
  require(handoff::rpc::encode(second) == again, std::string(method) + ": round trip changed the params");
}

void check_reply_text(const std::string& text) {
  const json reply = json::parse(text);  // throws (and so crashes the fuzzer) if invalid
  require(reply.is_object() && reply.value("jsonrpc", "") == "2.0", "reply without jsonrpc 2.0");
}

void fuzz_protocol(std::string_view bytes) {
  // The capped parser alone: what it accepts is valid JSON that survives a round trip.
  std::optional<json> doc;
  try {
    doc = handoff::rpc::parse_json(bytes, max_depth);
  } catch (const handoff::rpc::json_parse_error&) {
    // the parser's own error type; parse_message below must map it to -32700
  }
  if (doc) {
    const std::string dumped = strict_dump(*doc);
    require(handoff::rpc::parse_json(dumped, max_depth) == *doc, "parse(dump(x)) != x");
  }

  handoff::rpc::message msg;
  try {
    msg = handoff::rpc::parse_message(bytes, handoff::rpc::parse_limits{max_depth});
  } catch (const rpc_error& e) {
    require(e.code == errc::parse_error || e.code == errc::invalid_request,
            "parse_message threw a code other than -32700/-32600");
    require(doc.has_value() == (e.code != errc::parse_error), "parse_message and parse_json disagree");
    require(e.data.is_null() || (e.data.is_object() && e.data.contains("id")), "error data without id");
    const json id = e.data.is_object() ? e.data["id"] : json();
    check_reply_text(handoff::rpc::make_error(id, e.code, e.what(), nullptr));
    return;
  }
  require(doc.has_value(), "parse_message accepted what parse_json refused");
  require(msg.id.is_null() || msg.id.is_string() || msg.id.is_number_integer(), "an invalid id accepted");
  check_reply_text(handoff::rpc::make_response(msg.id, msg.params));
  if (msg.type == handoff::rpc::message::kind::response) {
    check_reply_text(handoff::rpc::make_response(msg.id, msg.result));
    return;
  }
  check_reply_text(handoff::rpc::make_request(msg.id, msg.method, msg.params));
  check_reply_text(handoff::rpc::make_notification(msg.method, msg.params));

  // Every method's decoder on these params, whatever the method was.
  namespace rpc = handoff::rpc;
  const rpc::wire_limits lim;
  const json& p = msg.params;
  decode_or_field_error([&] { rpc::decode_params<rpc::initialize_params>(p, lim); }, "initialize");
  decode_or_field_error([&] { rpc::decode_params<rpc::started_params>(p, lim); }, "subagent/started");
  decode_or_field_error([&] { rpc::decode_params<rpc::progress_params>(p, lim); }, "subagent/progress");
  decode_or_field_error([&] { rpc::decode_params<rpc::completed_params>(p, lim); }, "subagent/completed");
  {
    // The daemon's decoder moves finalText out of its params: same checks, same result.
    auto outcome = [](auto decode) {
      try {
        return rpc::encode(decode());
      } catch (const rpc_error& e) {
        return json{{"error", e.what()}};
      }
    };
    json taken_from = p;
    require(outcome([&] { return rpc::decode_params<rpc::completed_params>(p, lim); }) ==
                outcome([&] { return rpc::decode_params<rpc::completed_params>(std::move(taken_from), lim); }),
            "completed params decoded from a moved json and a kept one disagree");
  }
  decode_or_field_error([&] { rpc::decode_params<rpc::check_params>(p, lim); }, "subagent/check");
  decode_or_field_error([&] { rpc::decode_params<rpc::wait_params>(p, lim); }, "subagent/wait");
  decode_or_field_error([&] { rpc::decode_params<rpc::cancel_params>(p, lim); }, "subagent/cancel");
  decode_or_field_error([&] { rpc::decode_params<rpc::parent_state_params>(p, lim); }, "parent/state");
  decode_or_field_error([&] { rpc::decode_params<rpc::artifact_read_params>(p, lim); }, "artifact/read");
  // The daemon -> client shapes a client decodes from the daemon's requests.
  decode_or_field_error([&] { rpc::decode_usage(p); }, "usage");
  decode_or_field_error([&] { rpc::decode_usage_request(p); }, "context/usage");
  decode_or_field_error([&] { rpc::decode_deliver(p); }, "parent/deliver");
  decode_or_field_error([&] { rpc::decode_result<rpc::wait_result>(p); }, "subagent/wait result");
  decode_or_field_error([&] { rpc::decode_result<rpc::check_result>(p); }, "subagent/check result");

  round_trip<rpc::initialize_params>(p, lim, "initialize");
  round_trip<rpc::started_params>(p, lim, "subagent/started");
  round_trip<rpc::progress_params>(p, lim, "subagent/progress");
  round_trip<rpc::completed_params>(p, lim, "subagent/completed");
  round_trip<rpc::check_params>(p, lim, "subagent/check");
  round_trip<rpc::wait_params>(p, lim, "subagent/wait");
  round_trip<rpc::cancel_params>(p, lim, "subagent/cancel");
  round_trip<rpc::parent_state_params>(p, lim, "parent/state");
  round_trip<rpc::artifact_read_params>(p, lim, "artifact/read");
}

// ---- 2. the daemon in-process ---------------------------------------------------------------

using socket_type = asio::local::stream_protocol::socket;
constexpr auto as_tuple = asio::experimental::as_tuple(asio::use_awaitable);

// The process-wide part: one I/O context and one worker, as handoffd runs them.
struct daemon_env {
  asio::io_context io{1};
  asio::thread_pool pool{1};
  handoff::daemon::config cfg;
  fs::path base;

  daemon_env() {
    const char* shm = "/dev/shm";
    struct stat st {};
    const fs::path root = ::stat(shm, &st) == 0 && S_ISDIR(st.st_mode) ? fs::path(shm) : fs::temp_directory_path();
    base = root / ("handoff-fuzz-dispatch-" + std::to_string(::getpid()));
    fs::remove_all(base);
    fs::create_directories(base);
    fs::permissions(base, fs::perms::owner_all, fs::perm_options::replace);
    cfg.artifact_dir = base / "artifacts";
    cfg.queue_dir = base / "queue";
    cfg.flush_delay_ms = 0;  // no coalescing timer keeps the context running after the reply
  }
  // Runs until nothing is left to do on either side: handlers may post fire-and-forget work to
  // the pool (a wait's consume() after its reply was written) and pool work may post back. The
  // store and queue the handlers use must outlive both (handoffd joins its pool before they go).
  void settle() {
    for (;;) {
      io.restart();
      io.run();
      // One worker runs posted work in order: once this runs, everything before it has.
      std::promise<void> drained;
      asio::post(pool, [&drained] { drained.set_value(); });
      drained.get_future().wait();
      io.restart();
      if (io.poll() == 0) return;
    }
  }

  ~daemon_env() {
    pool.join();
    std::error_code ignored;
    fs::remove_all(base, ignored);
  }
};

daemon_env& env() {
  static daemon_env e;
  return e;
}

// The long result a wait must cut (and save as an artifact), and a short one.
std::string long_text() {
  std::string text;
  for (int i = 1; i <= 1000; ++i)
    text += "line " + std::to_string(i) + ": \xE4\xB8\xAD\xE6\x96\x87 result text of the subagent\n";
  return text + "VERDICT: done";
}

// Client side of the socketpair: writes the frame, half-closes, reads every reply until EOF.
asio::awaitable<void> client(socket_type& sock, const std::string& frame, std::string& received) {
  auto [wec, wn] = co_await asio::async_write(sock, asio::buffer(frame), as_tuple);
  (void)wn;
  asio::error_code ignored;
  if (!wec) sock.shutdown(socket_type::shutdown_send, ignored);
  std::string chunk(64 * 1024, '\0');
  for (;;) {
    auto [ec, n] = co_await sock.async_read_some(asio::buffer(chunk), as_tuple);
    if (ec) break;
    received.append(chunk.data(), n);
  }
}

// What the daemon must answer to `bytes`, from the protocol layer's own reading.
struct expectation {
  bool reply = false;  // one reply to the client, else none
  json id;             // its id
  std::optional<int> code;  // the parse/request error it must carry, when known
};

expectation expect(std::string_view bytes) {
  expectation e;
  try {
    const auto msg = handoff::rpc::parse_message(bytes, handoff::rpc::parse_limits{max_depth});
    e.reply = msg.type == handoff::rpc::message::kind::request;
    e.id = msg.id;
  } catch (const rpc_error& err) {
    e.reply = true;
    e.id = err.data.is_object() ? err.data["id"] : json();
    e.code = static_cast<int>(err.code);
  }
  return e;
}

void fuzz_daemon(std::string_view bytes) {
  daemon_env& d = env();
  std::string received;
  {
    {  // what an earlier run of the daemon left queued (recover() runs once per queue object)
      handoff::pending_queue earlier(d.cfg.queue_dir);
      earlier.recover();
      static const std::string long_result = long_text();
      earlier.put(handoff::completion{"p", "c2", "Long report", handoff::result_status::done, ""}, long_result);
      earlier.put(handoff::completion{"p", "c3", "", handoff::result_status::error, "it failed"}, "short\n");
    }
    handoff::artifact_store store(d.cfg.artifact_dir);
    handoff::pending_queue queue(d.cfg.queue_dir);
    handoff::daemon::service svc(d.cfg, d.io, d.pool, store, queue);
    svc.recover();  // no start_forgetting(): its timer would keep settle() from ever ending

    socket_type server_end(d.io), client_end(d.io);
    asio::local::connect_pair(server_end, client_end);
    auto conn = std::make_shared<handoff::daemon::connection>(std::move(server_end), d.cfg, svc, 1);
    svc.connection_opened();
    conn->start();
    const std::string frame =
        "Content-Length: " + std::to_string(bytes.size()) + "\r\n\r\n" + std::string(bytes);
    asio::co_spawn(d.io, client(client_end, frame, received), asio::detached);
    d.settle();
    conn.reset();
  }
  std::error_code ignored;
  fs::remove_all(d.cfg.artifact_dir, ignored);
  fs::remove_all(d.cfg.queue_dir, ignored);

  // The replies, as a client reads them (the daemon answers in the client's framing).
  handoff::rpc::frame_decoder decoder(64 * 1024 * 1024);
  decoder.feed(received);
  std::vector<json> replies;
  while (auto f = decoder.next()) {
    require(!f->oversized, "an oversized reply");
    json m;
    try {
      m = json::parse(f->payload);
    } catch (const json::exception&) {
      broken("a reply that is not JSON");
    }
    require(m.is_object() && m.value("jsonrpc", "") == "2.0", "a reply without \"jsonrpc\": \"2.0\"");
    if (m.contains("method")) continue;  // a daemon -> client request (context/usage...)
    replies.push_back(std::move(m));
  }
  require(decoder.buffered_bytes() == 0, "a partial reply frame at EOF");

  const expectation e = expect(bytes);
  require(replies.size() == (e.reply ? 1u : 0u),
          "expected " + std::to_string(e.reply ? 1 : 0) + " replies, got " + std::to_string(replies.size()));
  if (!e.reply) return;
  const json& r = replies.front();
  require(r.contains("id") && r["id"] == e.id, "a reply to the wrong id: " + r.dump());
  require(r.contains("result") != r.contains("error"), "a reply with both or neither result and error");
  if (!r.contains("error")) return;
  const json& err = r["error"];
  require(err.is_object() && err.contains("code") && err["code"].is_number_integer() && err.contains("message") &&
              err["message"].is_string(),
          "a malformed error object: " + r.dump());
  const int code = err["code"].get<int>();
  require(documented(code), "an undocumented error code: " + r.dump());
  require(code != static_cast<int>(errc::internal_error), "an internal error (an unexpected exception): " + r.dump());
  if (e.code) require(code == *e.code, "the daemon's parse error differs from parse_message's: " + r.dump());
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  std::signal(SIGPIPE, SIG_IGN);
  spdlog::set_level(spdlog::level::off);
  env();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  fuzz_protocol(bytes);
  fuzz_daemon(bytes);
  return 0;
}
