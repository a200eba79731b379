// The typed fast paths against the slow ones, on the same bytes (differential).
//
// rpc::read_response<R>(frame, id) reads a reply straight into its Result (the client), and
// read_request_text + read_params_text<P> a request into its params (the daemon); they may
// decline anything, but whatever they accept the slow path must accept too and decode to the
// same struct: parse_message finds a response to `id` with a result that decode_result<R> takes,
// or a request with that id, method and params that decode_params<P> takes. Input: byte 0 picks
// the type, the rest is the frame (id 1).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "protocol/jsonrpc.hpp"
#include "protocol/methods.hpp"

namespace {

namespace rpc = handoff::rpc;

void require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "fuzz_reply: invariant broken: %s\n", what);
  std::abort();
}

template <class R>
void check(std::string_view frame) {
  const auto fast = rpc::read_response<R>(frame, 1);
  if (!fast) return;
  try {
    const rpc::message m = rpc::parse_message(frame);
    require(m.type == rpc::message::kind::response && !m.error && m.id == 1, "accepted a frame that is not our reply");
    require(rpc::encode(rpc::decode_result<R>(m.result)) == rpc::encode(*fast), "decoded otherwise than the slow path");
  } catch (const rpc::rpc_error&) {
    require(false, "accepted a reply the slow path refuses");
  }
}

template <class P>
void check_request(std::string_view frame) {
  const auto request = rpc::read_request_text(frame);
  if (!request) return;
  P fast{};
  const rpc::wire_limits lim{};
  if (!rpc::read_params_text(request->params, lim, fast)) return;
  try {
    const rpc::message m = rpc::parse_message(frame);
    require(m.type == rpc::message::kind::request && m.id == request->id && m.method == request->method,
            "read a request otherwise than the parser");
    require(rpc::encode(rpc::decode_params<P>(m.params, lim)) == rpc::encode(fast), "params decoded otherwise");
  } catch (const rpc::rpc_error&) {
    require(false, "accepted a request the slow path refuses");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::string_view frame(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 8) {
    case 0: check<rpc::status_result>(frame); break;
    case 1: check<rpc::check_result>(frame); break;
    case 2: check<rpc::cancel_result>(frame); break;
    case 3: check<rpc::completed_result>(frame); break;
    case 4: check<rpc::gc_result>(frame); break;
    case 5: check_request<rpc::started_params>(frame); break;
    case 6: check_request<rpc::status_params>(frame); break;
    default: check_request<rpc::check_params>(frame); break;
  }
  return 0;
}
