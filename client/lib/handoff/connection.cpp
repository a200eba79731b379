// The session mechanics: request ids, reading frames until a call's reply is in, filing replies
// that belong to an outer call, and answering the daemon's own requests in between.
#include "handoff/connection.hpp"

#include <array>
#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <utility>

#include "protocol/json_dump.hpp"
#include "protocol/socket_location.hpp"
#include "utf8.hpp"

namespace handoff::client {
namespace {

std::string describe_ms(milliseconds ms) { return std::to_string(ms.count()) + " ms"; }

// A request buffer that grew past this for a large message is given back after it was sent;
// a smaller one is kept for the next call (a 1 MiB final text then goes into memory already
// touched, not into fresh pages).
constexpr std::size_t keep_request_bytes = 4 * 1024 * 1024;

// A final text at least this long is escaped and sent piece by piece, each piece as soon as it is
// escaped, so the daemon reads the first while the next is written (the escaping of a long text
// no longer comes before the transfer; docs/benchmarks.md, "Figures behind the code"); shorter
// ones go as one write.
constexpr std::size_t stream_text_bytes = 256 * 1024;
// Bytes of the text escaped into each piece (cut back to a character boundary).
constexpr std::size_t text_piece_bytes = 64 * 1024;

// What closes a message whose params end with the text member: the params, then the message.
constexpr std::string_view text_message_end = "}}";

[[noreturn]] void refuse_not_utf8(std::string_view method, const nlohmann::json::type_error& e) {
  const std::string_view what = e.what();  // "[json.exception.type_error.316] invalid UTF-8 byte at ..."
  throw std::invalid_argument(std::string(method) + ": not sent, a string in it is not valid UTF-8 (" +
                              std::string(what.substr(what.find(']') + 2)) + ")");
}

// Checks `text` as strict_message would, without writing it: throws the same error when it is not
// UTF-8.
void check_text(std::string_view method, std::string_view text) {
  if (valid_utf8(text)) return;
  try {
    (void)nlohmann::json(std::string(text)).dump();  // throws, saying where
  } catch (const nlohmann::json::type_error& e) {
    refuse_not_utf8(method, e);
  }
  throw std::logic_error(std::string(method) + ": valid_utf8 refused a text that nlohmann accepts");
}

// Writes into `out` rpc::make_request / make_notification's wire form up to where the value of
// `text_key` goes: with a key, the params object (an object) is left open after `"key":`, and
// the caller writes the value and then text_message_end; without, the message is complete. A
// string that is not UTF-8 is refused rather than replaced with U+FFFD: a final text must reach
// the daemon byte for byte or not at all. Nothing has been sent when this throws.
void message_head(std::string& out, const nlohmann::json& id, std::string_view method,
                  const nlohmann::json& params, std::optional<std::string_view> text_key) {
  out = R"({"jsonrpc":"2.0",)";
  if (!id.is_null()) {
    out += R"("id":)";
    if (!rpc::append_json(out, id)) out += id.dump();  // throws as before: not UTF-8
    out += ',';
  }
  out += R"("method":)";
  if (!rpc::append_json_string(out, method)) out += nlohmann::json(method).dump();  // throws, likewise
  try {
    if (!params.is_null()) {
      out += R"(,"params":)";
      // The fast writer copies long strings in runs, an order of magnitude faster than dump()
      // (docs/benchmarks.md); it declines invalid UTF-8, which dump() then refuses with its message.
      if (!rpc::append_json(out, params)) out += params.dump();
    }
    if (text_key) {
      // params is an object: its closing brace moves behind the text member.
      out.pop_back();
      if (!params.empty()) out += ',';
      rpc::append_json_string(out, *text_key);
      out += ':';
      return;
    }
  } catch (const nlohmann::json::type_error& e) {
    refuse_not_utf8(method, e);
  }
  out += '}';
}

// The whole message, `text` (when given) as one more member of the params object.
void strict_message(std::string& out, const nlohmann::json& id, std::string_view method,
                    const nlohmann::json& params, const std::optional<text_member>& text) {
  message_head(out, id, method, params, text ? std::optional(text->key) : std::nullopt);
  if (!text) return;
  if (!rpc::append_json_string(out, text->value)) check_text(method, text->value);  // throws
  out += text_message_end;
}

// A JSON-RPC error object as the client_error a caller sees.
client_error from_error_object(const nlohmann::json& error) {
  const auto code = static_cast<rpc::errc>(error.at("code").get<int>());
  nlohmann::json data = error.contains("data") ? error["data"] : nlohmann::json();
  return client_error(code, error.at("message").get<std::string>(), std::move(data));
}

}  // namespace

std::filesystem::path default_socket_path() {
  const rpc::socket_location where = rpc::client_socket_location();
  if (where.source != rpc::socket_source::private_fallback) return where.path;
  // In a directory anybody may write to, a socket could be another user's: the directory is
  // made ours, or found ours and closed to others, before we dial (or start handoffd) there.
  try {
    rpc::prepare_socket_dir(where.path.parent_path());
  } catch (const std::runtime_error& e) {
    throw client_error(error_kind::refused, std::string(e.what()) + "; it holds handoffd's socket because " +
                                                std::string(rpc::client_reason(where.source)) +
                                                " (set either, or pass --socket PATH)");
  }
  return where.path;
}

namespace {

unix_stream open_stream(const options& o) {
  const std::filesystem::path socket = o.socket.empty() ? default_socket_path() : o.socket;
  return o.start ? connect_or_start(socket, *o.start) : unix_stream::connect(socket);
}

}  // namespace

connection::connection(options opts)
    : options_(std::move(opts)),
      stream_(open_stream(options_)),
      decoder_(options_.max_frame_bytes) {}

nlohmann::json connection::call(std::string_view method, const nlohmann::json& params,
                            std::optional<milliseconds> timeout) {
  return call_with_text(method, params, std::nullopt, timeout);
}

nlohmann::json connection::call_with_text(std::string_view method, const nlohmann::json& params,
                                          const std::optional<text_member>& text,
                                          std::optional<milliseconds> timeout, const cancel_signal* cancel,
                                          const reply_reader* fast) {
  const std::int64_t id = next_id_++;
  deadline until = deadline_after(timeout);
  bool cancel_sent = false;
  const bool in_pieces = text && text->value.size() >= stream_text_bytes;
  if (in_pieces) {
    message_head(request_, id, method, params, text->key);  // the params' errors first, as below
    check_text(method, text->value);  // all of it, before the first byte is sent
  } else {
    strict_message(request_, id, method, params, text);
  }
  awaiting_.insert(id);
  struct forget {  // on every way out, a late reply to this id is dropped, not filed
    connection* self;
    std::int64_t id;
    ~forget() {
      self->awaiting_.erase(id);
      self->replies_.erase(id);
    }
  } guard{this, id};
  try {
    if (in_pieces) {
      write_text_frame(request_, text->value, until);
    } else {
      write_frame(request_, until);
    }
    if (request_.capacity() > keep_request_bytes) std::string().swap(request_);
  } catch (const client_error& e) {
    // The daemon hung up; it may have said why first (the connection cap): prefer its words.
    if (e.kind() == error_kind::refused) read_last_words();
    throw;
  }
  bool just_sent = true;  // its reply takes a round trip: the first read polls before it tries
  for (;;) {
    if (auto it = replies_.find(id); it != replies_.end()) {
      rpc::message reply = std::move(it->second);
      if (reply.error) throw from_error_object(*reply.error);
      return std::move(reply.result);
    }
    auto frame = next_frame(until, cancel != nullptr ? cancel->fd() : -1, just_sent);
    just_sent = false;
    if (frame) {
      if (fast != nullptr && !frame->oversized && (*fast)(frame->payload, id)) return nullptr;  // the caller has it
      handle(parsed(*frame));
      continue;
    }
    if (cancel != nullptr && cancel->raised()) {
      // Once: the daemon answers the call either way (the result, or request_cancelled).
      notify(rpc::methods::cancel_request, rpc::cancel_request_params{id});
      const auto grace = clock::now() + options_.cancel_grace;
      until = until ? std::min(*until, grace) : grace;
      cancel = nullptr;
      cancel_sent = true;
      continue;
    }
    throw client_error(error_kind::timeout,
                       std::string(method) + ": no reply from handoffd at " + stream_.path().string() + " within " +
                           (cancel_sent ? describe_ms(options_.cancel_grace) + " of asking it to cancel the call"
                                        : describe_ms(*timeout)));
  }
}

void connection::read_last_words() {
  while (auto message = next_message(clock::now())) handle(std::move(*message));
}

void connection::notify(std::string_view method, const nlohmann::json& params) {
  std::string message;
  strict_message(message, nullptr, method, params, std::nullopt);
  send(message);
}

void connection::on_request(const std::string& method, request_handler handler) {
  if (handler)
    handlers_[method] = std::move(handler);
  else
    handlers_.erase(method);
}

bool connection::serve_one(std::optional<milliseconds> timeout) {
  const deadline until = deadline_after(timeout);
  const std::size_t before = handled_;
  while (handled_ == before) {
    auto message = next_message(until);
    if (!message) return false;
    handle(std::move(*message));
  }
  return true;
}

std::optional<rpc::message> connection::next_message(deadline until, int wake_fd, bool just_sent) {
  auto frame = next_frame(until, wake_fd, just_sent);
  if (!frame) return std::nullopt;
  return parsed(*frame);
}

rpc::message connection::parsed(const rpc::decoded_frame& frame) {
  try {
    return rpc::parse_message(frame.payload);
  } catch (const rpc::rpc_error& e) {
    throw client_error(error_kind::protocol, std::string("handoffd sent a malformed message: ") + e.what());
  }
}

std::optional<rpc::decoded_frame> connection::next_frame(deadline until, int wake_fd, bool just_sent) {
  for (;;) {
    std::optional<rpc::decoded_frame> frame;
    try {
      frame = decoder_.next();
    } catch (const std::exception& e) {
      throw client_error(error_kind::protocol, std::string("handoffd sent a bad frame: ") + e.what());
    }
    if (frame) {
      if (frame->oversized)
        throw client_error(error_kind::protocol,
                           "handoffd sent a message of " + std::to_string(frame->oversized_bytes) +
                               " bytes, over this client's cap of " + std::to_string(options_.max_frame_bytes));
      return frame;
    }
    std::array<char, 64 * 1024> chunk;
    const auto n = stream_.read_some(chunk, until, wake_fd, std::exchange(just_sent, false));
    if (!n) return std::nullopt;
    if (*n == 0) connection_closed(awaiting_.empty() ? "while we waited for its requests" : "before answering");
    decoder_.feed(std::string_view(chunk.data(), *n));
  }
}

void connection::handle(rpc::message message) {
  switch (message.type) {
    case rpc::message::kind::response: {
      // An error the daemon could not tie to a request (it had no readable id) concerns what we
      // sent last, or the connection itself: the connection cap, a frame over the daemon's cap.
      if (message.id.is_null()) {
        if (!message.error) throw client_error(error_kind::protocol, "handoffd sent a result with a null id");
        client_error e = from_error_object(*message.error);
        if (e.code() == rpc::errc::too_many_connections)
          throw client_error(error_kind::refused, std::string("handoffd refused the connection: ") + e.what());
        throw e;
      }
      if (!message.id.is_number_integer()) return;  // not an id of ours
      const auto id = message.id.get<std::int64_t>();
      if (awaiting_.contains(id)) replies_.insert_or_assign(id, std::move(message));
      return;  // else: a late reply to a call that timed out
    }
    case rpc::message::kind::request:
      answer(message);
      ++handled_;
      return;
    case rpc::message::kind::notification:
      return;
  }
}

// Exactly one reply per request, whatever the handler does.
void connection::answer(const rpc::message& request) {
  const auto it = handlers_.find(request.method);
  if (it == handlers_.end()) {
    send(rpc::make_error(request.id, rpc::errc::method_not_found,
                         "this client does not handle '" + request.method + "'"));
    return;
  }
  std::string reply;
  try {
    // A copy: the handler may replace or remove itself.
    const request_handler handler = it->second;
    reply = rpc::make_response(request.id, handler(request.params));
  } catch (const rpc::rpc_error& e) {
    reply = rpc::make_error(request.id, e.code, e.what(), e.data);
  } catch (const std::exception& e) {
    reply = rpc::make_error(request.id, rpc::errc::internal_error, e.what());
  } catch (...) {
    reply = rpc::make_error(request.id, rpc::errc::internal_error, "the handler failed");
  }
  send(reply);
}

void connection::send(const std::string& payload) { write_frame(payload, deadline_after(options_.call_timeout)); }

// Newline-delimited JSON: the payload, then '\n', in one sendmsg without copying them together
// (a final text may be 64 MiB).
void connection::write_frame(std::string_view payload, deadline until) {
  stream_.write_all(payload, "\n", until);
}

// The frame of a message whose head is `head` and whose last member's value is `text` (valid
// UTF-8, checked by the caller): the text is escaped one piece at a time, each piece cut on a
// character boundary and sent before the next is escaped.
void connection::write_text_frame(std::string_view head, std::string_view text, deadline until) {
  stream_.write_all(head, until);
  for (std::size_t at = 0; at < text.size();) {
    std::size_t end = std::min(text.size(), at + text_piece_bytes);
    if (end < text.size()) end = utf8_floor(text, end);
    piece_.clear();
    if (at == 0) piece_ += '"';
    // Checked before the first byte was sent: a refusal here is a bug, and leaves the frame cut
    // short (the daemon waits for its end until its frame timeout).
    if (!rpc::append_json_escaped(piece_, text.substr(at, end - at)))
      throw std::logic_error("write_text_frame: a piece of a checked text was refused");
    at = end;
    if (at == text.size()) {
      piece_ += '"';
      piece_ += text_message_end;
      piece_ += '\n';
    }
    stream_.write_all(piece_, until);
  }
}

void connection::connection_closed(std::string_view during) const {
  throw client_error(error_kind::refused,
                     "handoffd at " + stream_.path().string() + " closed the connection " + std::string(during));
}

}  // namespace handoff::client
