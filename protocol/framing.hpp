// Framing of a byte stream into JSON-RPC frames. A connection speaks newline-delimited JSON,
// unless its first bytes are `Content-Length:` (LSP-style headers), decided once per connection.
// The decoder never buffers more than max_frame_bytes (+ one header block): an oversized frame
// is skipped and reported, and decoding goes on with the next one.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace handoff::rpc {

enum class framing { undecided, ndjson, content_length };

struct decoded_frame {
  std::string payload;           // one JSON text (without the newline / headers)
  bool oversized = false;        // the frame exceeded the cap: payload is empty, it was skipped
  std::size_t oversized_bytes = 0;  // how large it was (as far as read)
};

class frame_decoder {
 public:
  explicit frame_decoder(std::size_t max_frame_bytes);

  // Appends bytes read from the socket.
  void feed(std::string_view bytes);

  // The next complete frame, or nullopt when more bytes are needed. Throws std::runtime_error
  // on a malformed header block (content_length mode); the stream cannot be resynchronised then.
  std::optional<decoded_frame> next();

  framing mode() const noexcept { return mode_; }
  std::size_t buffered_bytes() const noexcept { return buffer_.size(); }

 private:
  std::size_t max_frame_bytes_;
  framing mode_ = framing::undecided;
  std::string buffer_;
  std::size_t scan_from_ = 0;        // ndjson: bytes already searched for '\n'
  std::size_t discarding_ = 0;       // ndjson: > 0 while skipping an oversized line
  std::optional<std::size_t> body_length_;  // content_length: length of the current body
  std::size_t skip_body_ = 0;        // content_length: bytes of an oversized body left to skip
  std::size_t skipped_total_ = 0;
};

// Frames one JSON text for the wire in the given mode (ndjson when undecided).
std::string encode_frame(std::string_view payload, framing mode);

}  // namespace handoff::rpc
