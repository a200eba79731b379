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

// Content-Length mode: the most bytes one header block ("Content-Length: N\r\n...\r\n\r\n")
// may take before it counts as malformed.
inline constexpr std::size_t max_header_block_bytes = 8 * 1024;

// Frames come out in stream order. An oversized frame is reported once, in its place, when its
// last byte has been skipped (at its '\n', or at the end of its Content-Length body).
struct decoded_frame {
  std::string payload;              // one JSON text (without the newline / headers)
  bool oversized = false;           // the frame exceeded the cap: payload is empty, it was skipped
  std::size_t oversized_bytes = 0;  // how large it was (as far as read)
};

class frame_decoder {
 public:
  explicit frame_decoder(std::size_t max_frame_bytes);

  // Appends bytes read from the socket. Bytes of a frame being skipped are dropped here, never
  // buffered.
  void feed(std::string_view bytes);

  // The next complete frame, or nullopt when more bytes are needed. Throws std::runtime_error
  // on a malformed header block (content_length mode); the stream cannot be resynchronised then.
  std::optional<decoded_frame> next();

  framing mode() const noexcept { return mode_; }
  // Bytes received and not yet returned as frames: <= max_frame_bytes + max_header_block_bytes
  // once next() has returned nullopt.
  std::size_t buffered_bytes() const noexcept { return buffer_.size() - read_pos_; }
  // True while a frame has begun and not ended, including an oversized one being skipped
  // (buffered_bytes() is 0 then); for a slow-frame watchdog.
  bool in_frame() const noexcept { return buffered_bytes() > 0 || skipping_; }

 private:
  void decide_mode();
  std::optional<decoded_frame> next_line();
  std::optional<decoded_frame> next_body();
  std::string_view drop_skipped(std::string_view bytes);
  decoded_frame take(std::size_t begin, std::size_t length, std::size_t consumed_to);
  void compact();

  std::size_t max_frame_bytes_;
  framing mode_ = framing::undecided;
  std::string buffer_;             // received bytes; [read_pos_, size) not consumed yet
  std::size_t read_pos_ = 0;       // start of the unconsumed bytes
  std::size_t scan_from_ = 0;      // index up to which buffer_ was searched for '\n'
  std::size_t line_begin_ = 0;     // content_length: start of the header line being scanned
  std::optional<std::size_t> body_length_;  // content_length: the current body's length
  bool skipping_ = false;          // inside an oversized frame: its bytes are dropped
  bool skipped_ready_ = false;     // an oversized frame ended: next() reports it
  std::size_t skip_body_ = 0;      // content_length: bytes of an oversized body left to skip
  std::size_t skipped_total_ = 0;  // bytes of the current oversized frame skipped so far
};

// Frames one JSON text for the wire in the given mode (ndjson when undecided).
std::string encode_frame(std::string_view payload, framing mode);

}  // namespace handoff::rpc
