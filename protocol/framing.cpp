// Frame decoding for both framings. Every byte is looked at a bounded number of times: '\n' is
// searched with memchr from where the last search stopped (scan_from_), consumed bytes are only
// skipped over (read_pos_) and erased once per read, and a skipped frame never enters buffer_.
#include "protocol/framing.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

namespace handoff::rpc {
namespace {

constexpr std::string_view content_length_prefix = "content-length:";
constexpr std::string_view content_length_name = "content-length";
// An emptied buffer that grew beyond this (a large frame went through) gives its memory back.
constexpr std::size_t keep_capacity_bytes = 64 * 1024;

char to_lower(char c) noexcept {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

bool iequals(std::string_view a, std::string_view b) noexcept {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return to_lower(x) == to_lower(y);
         });
}

bool is_json_space(char c) noexcept { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

bool is_blank(std::string_view line) noexcept {
  return line.find_first_not_of(" \t\r") == line.npos;
}

std::string_view trim(std::string_view s) noexcept {
  const auto first = s.find_first_not_of(" \t");
  if (first == s.npos) return {};
  return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

[[noreturn]] void malformed(const std::string& why) {
  throw std::runtime_error("malformed header block: " + why);
}

std::size_t parse_content_length(std::string_view value) {
  std::size_t length = 0;
  const char* end = value.data() + value.size();
  const auto [ptr, ec] = std::from_chars(value.data(), end, length);
  if (value.empty() || ec != std::errc{} || ptr != end)
    malformed("Content-Length is not a decimal byte count: '" + std::string(value.substr(0, 32)) +
              "'");
  return length;
}

// The Content-Length of one header block: "Name: value" lines, each ending in "\r\n" (already
// checked by the caller). Names are case-insensitive; Content-Type and other headers are ignored.
std::size_t parse_header_block(std::string_view block) {
  std::optional<std::size_t> length;
  while (!block.empty()) {
    const auto eol = block.find("\r\n");
    const std::string_view line = block.substr(0, eol);
    block.remove_prefix(std::min(block.size(), eol + 2));
    const auto colon = line.find(':');
    if (colon == line.npos || colon == 0)
      malformed("expected 'Name: value', got '" + std::string(line.substr(0, 64)) + "'");
    const std::string_view name = line.substr(0, colon);
    if (std::any_of(name.begin(), name.end(),
                    [](char c) { return static_cast<unsigned char>(c) <= ' ' || c == 0x7f; }))
      malformed("invalid header name '" + std::string(name.substr(0, 64)) + "'");
    if (!iequals(name, content_length_name)) continue;
    if (length) malformed("more than one Content-Length");
    length = parse_content_length(trim(line.substr(colon + 1)));
  }
  if (!length) malformed("no Content-Length header");
  return *length;
}

}  // namespace

frame_decoder::frame_decoder(std::size_t max_frame_bytes) : max_frame_bytes_(max_frame_bytes) {
  if (max_frame_bytes == 0)
    throw std::invalid_argument("frame_decoder: max_frame_bytes must be > 0");
}

void frame_decoder::feed(std::string_view bytes) {
  bytes = drop_skipped(bytes);
  if (bytes.empty()) return;
  // Amortised O(1) per byte: erase the consumed prefix only once it outweighs what is left.
  if (read_pos_ > 0 && read_pos_ >= buffer_.size() - read_pos_) compact();
  buffer_.append(bytes);
}

std::optional<decoded_frame> frame_decoder::next() {
  if (skipped_ready_) {
    skipped_ready_ = false;
    decoded_frame frame;
    frame.oversized = true;
    frame.oversized_bytes = std::exchange(skipped_total_, 0);
    return frame;
  }
  std::optional<decoded_frame> frame;
  if (!skipping_) {
    if (mode_ == framing::undecided) decide_mode();
    switch (mode_) {
      case framing::ndjson:
        frame = next_line();
        break;
      case framing::content_length:
        frame = next_body();
        break;
      case framing::undecided:
        break;
    }
  }
  if (!frame) compact();  // what is left is one partial frame: move it to the front once
  return frame;
}

std::string_view frame_decoder::drop_skipped(std::string_view bytes) {
  if (!skipping_) return bytes;
  std::size_t dropped = 0;
  if (mode_ == framing::ndjson) {
    const void* newline = std::memchr(bytes.data(), '\n', bytes.size());
    if (newline == nullptr) {
      skipped_total_ += bytes.size();
      return {};
    }
    const auto line_end =
        static_cast<std::size_t>(static_cast<const char*>(newline) - bytes.data());
    skipped_total_ += line_end;
    dropped = line_end + 1;
  } else {
    dropped = std::min(skip_body_, bytes.size());
    skip_body_ -= dropped;
    skipped_total_ += dropped;
    if (skip_body_ > 0) return {};
  }
  skipping_ = false;
  skipped_ready_ = true;
  return bytes.substr(dropped);
}

void frame_decoder::decide_mode() {
  // Leading whitespace tells nothing about the framing and means nothing in JSON: drop it.
  while (read_pos_ < buffer_.size() && is_json_space(buffer_[read_pos_])) ++read_pos_;
  scan_from_ = read_pos_;
  const std::size_t n = std::min(buffer_.size() - read_pos_, content_length_prefix.size());
  if (n == 0) return;
  const std::string_view head(buffer_.data() + read_pos_, n);
  if (!iequals(head, content_length_prefix.substr(0, n)))
    mode_ = framing::ndjson;
  else if (n == content_length_prefix.size())
    mode_ = framing::content_length;
  // else: a prefix of "Content-Length:" so far; wait for more bytes.
}

std::optional<decoded_frame> frame_decoder::next_line() {
  for (;;) {
    const char* data = buffer_.data();
    const void* newline = std::memchr(data + scan_from_, '\n', buffer_.size() - scan_from_);
    if (newline == nullptr) {
      scan_from_ = buffer_.size();
      // One byte over the cap is allowed: it may be the '\r' of a CRLF line end.
      if (buffer_.size() - read_pos_ > max_frame_bytes_ + 1) {
        skipped_total_ = buffer_.size() - read_pos_;
        read_pos_ = scan_from_ = buffer_.size();
        skipping_ = true;
      }
      return std::nullopt;
    }
    const auto line_end = static_cast<std::size_t>(static_cast<const char*>(newline) - data);
    std::size_t end = line_end;
    if (end > read_pos_ && data[end - 1] == '\r') --end;
    const std::size_t begin = read_pos_;
    if (end - begin > max_frame_bytes_) {
      read_pos_ = scan_from_ = line_end + 1;
      decoded_frame frame;
      frame.oversized = true;
      frame.oversized_bytes = end - begin;
      return frame;
    }
    if (is_blank(std::string_view(data + begin, end - begin))) {
      read_pos_ = scan_from_ = line_end + 1;
      continue;
    }
    return take(begin, end - begin, line_end + 1);
  }
}

std::optional<decoded_frame> frame_decoder::next_body() {
  if (!body_length_) {
    if (scan_from_ <= read_pos_) {  // a new header block
      // Blank lines between messages are tolerated: some writers end a body with a newline.
      while (read_pos_ < buffer_.size() &&
             (buffer_[read_pos_] == '\r' || buffer_[read_pos_] == '\n'))
        ++read_pos_;
      scan_from_ = line_begin_ = read_pos_;
    }
    for (;;) {
      const char* data = buffer_.data();
      const void* newline = std::memchr(data + scan_from_, '\n', buffer_.size() - scan_from_);
      scan_from_ = newline == nullptr
                       ? buffer_.size()
                       : static_cast<std::size_t>(static_cast<const char*>(newline) - data) + 1;
      if (scan_from_ - read_pos_ > max_header_block_bytes)
        malformed("longer than " + std::to_string(max_header_block_bytes) + " bytes");
      if (newline == nullptr) return std::nullopt;
      const std::size_t line_end = scan_from_ - 1;  // the '\n'
      if (line_end == line_begin_ || data[line_end - 1] != '\r')
        malformed("header lines must end with \\r\\n");
      const bool block_ends = line_end - 1 == line_begin_;  // the empty line
      line_begin_ = scan_from_;
      if (block_ends) {
        body_length_ =
            parse_header_block(std::string_view(data + read_pos_, line_end - 1 - read_pos_));
        read_pos_ = scan_from_;
        break;
      }
    }
  }
  const std::size_t length = *body_length_;
  const std::size_t available = buffer_.size() - read_pos_;
  if (length > max_frame_bytes_) {
    body_length_.reset();
    const std::size_t have = std::min(available, length);
    read_pos_ += have;
    scan_from_ = read_pos_;
    skipped_total_ = have;
    skip_body_ = length - have;
    if (skip_body_ > 0) {
      skipping_ = true;  // nothing else is buffered: the rest of the body is dropped by feed()
      return std::nullopt;
    }
    decoded_frame frame;
    frame.oversized = true;
    frame.oversized_bytes = std::exchange(skipped_total_, 0);
    return frame;
  }
  if (available < length) return std::nullopt;
  body_length_.reset();
  return take(read_pos_, length, read_pos_ + length);
}

decoded_frame frame_decoder::take(std::size_t begin, std::size_t length, std::size_t consumed_to) {
  decoded_frame frame;
  if (begin == 0 && consumed_to == buffer_.size() && length >= keep_capacity_bytes) {
    // A large frame that is the whole buffer: hand over the storage instead of copying it.
    frame.payload.swap(buffer_);
    frame.payload.resize(length);
    read_pos_ = scan_from_ = 0;
    return frame;
  }
  frame.payload.assign(buffer_, begin, length);
  read_pos_ = scan_from_ = consumed_to;
  return frame;
}

void frame_decoder::compact() {
  if (read_pos_ == 0) return;
  if (read_pos_ < buffer_.size()) {
    buffer_.erase(0, read_pos_);
  } else if (buffer_.capacity() > keep_capacity_bytes) {
    std::string().swap(buffer_);
  } else {
    buffer_.clear();
  }
  scan_from_ = scan_from_ > read_pos_ ? scan_from_ - read_pos_ : 0;
  line_begin_ = line_begin_ > read_pos_ ? line_begin_ - read_pos_ : 0;
  read_pos_ = 0;
}

std::string encode_frame(std::string_view payload, framing mode) {
  std::string out;
  if (mode == framing::content_length) {
    const std::string header = "Content-Length: " + std::to_string(payload.size()) + "\r\n\r\n";
    out.reserve(header.size() + payload.size());
    out += header;
    out += payload;
  } else {
    out.reserve(payload.size() + 1);
    out += payload;
    out += '\n';
  }
  return out;
}

}  // namespace handoff::rpc
