// Wording of the omission marker and the footer. Plain and short: under the wait surface's
// 512-byte floor the footer and its ~120-byte artifact path must still leave room for text.
//
//   [... middle omitted: lines 301-389 of 422, 20,123 bytes ...]
//   [Truncated: 36,997 bytes / 422 lines in full; shown: lines 1-300, lines 390-422.
//   Full text: /abs/dir/<sha256>.txt — read it with offset=301 limit=89 for the omitted lines.]
//
// Byte counts are grouped by thousands for people; line numbers never are, because the model
// copies `offset` and `limit` straight into a tool call.
#include "engine/projection_notice.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <limits>
#include <string_view>

#include "utf8.hpp"

namespace handoff {
namespace {

using digit_buffer = std::array<char, std::numeric_limits<std::size_t>::digits10 + 2>;

// The decimal digits of n, in `buffer`.
std::string_view digits_of(std::size_t n, digit_buffer& buffer) noexcept {
  const auto [end, ec] = std::to_chars(buffer.data(), buffer.data() + buffer.size(), n);
  static_cast<void>(ec);  // the buffer holds every size_t
  return {buffer.data(), static_cast<std::size_t>(end - buffer.data())};
}

void append_number(std::string& out, std::size_t n) {
  digit_buffer buffer;
  out += digits_of(n, buffer);
}

// 36997 -> "36,997".
void append_grouped(std::string& out, std::size_t n) {
  digit_buffer buffer;
  const std::string_view digits = digits_of(n, buffer);
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
}

// "1 byte", "36,997 bytes".
void append_bytes(std::string& out, std::size_t n) {
  append_grouped(out, n);
  out += n == 1 ? " byte" : " bytes";
}

// The largest number with as many digits as n (999 for 422): no number <= n prints wider.
std::size_t widest(std::size_t n) noexcept {
  constexpr std::size_t max = std::numeric_limits<std::size_t>::max();
  std::size_t all_nines = 9;
  while (all_nines < n) {
    if (all_nines > (max - 9) / 10) return max;
    all_nines = all_nines * 10 + 9;
  }
  return all_nines;
}

void append_span(std::string& out, line_span span) {
  out += span.first == span.last ? "line " : "lines ";
  append_number(out, span.first);
  if (span.first != span.last) {
    out.push_back('-');
    append_number(out, span.last);
  }
}

void append_shown(std::string& out, const notice_numbers& n) {
  const std::size_t before = out.size();
  const auto separate = [&] {
    if (out.size() > before) out += ", ";
  };
  if (n.head.first != 0) append_span(out, n.head);
  if (n.head_part_line != 0) {
    separate();
    out += "start of line ";
    append_number(out, n.head_part_line);
  }
  if (n.tail_part_line != 0) {
    separate();
    out += "end of line ";
    append_number(out, n.tail_part_line);
  }
  if (n.tail.first != 0) {
    separate();
    append_span(out, n.tail);
  }
  if (out.size() == before) out += "nothing";
}

// The error as one line of at most max_notice_reason_bytes bytes.
void append_reason(std::string& out, std::string_view error) {
  if (error.empty()) error = "no reason given";
  const bool clipped = error.size() > max_notice_reason_bytes;
  if (clipped) error = error.substr(0, utf8_floor(error, max_notice_reason_bytes - 3));
  for (const char c : error) {
    const auto byte = static_cast<unsigned char>(c);
    out.push_back(byte < 0x20U || byte == 0x7FU ? ' ' : c);
  }
  if (clipped) out += "...";
}

}  // namespace

void append_marker(std::string& out, const notice_numbers& n) {
  out += "[... middle omitted: ";
  append_span(out, n.omitted);
  out += " of ";
  append_number(out, n.total.lines);
  out += ", ";
  append_bytes(out, n.omitted_bytes);
  out += " ...]";
}

void append_footer(std::string& out, const notice_numbers& n, const artifact_ref& artifact) {
  out += "[Truncated: ";
  append_bytes(out, n.total.bytes);
  out += " / ";
  append_number(out, n.total.lines);
  out += n.total.lines == 1 ? " line" : " lines";
  out += " in full; shown: ";
  append_shown(out, n);
  out += ".\n";
  if (artifact.saved) {
    out += "Full text: ";
    out += artifact.path;
    out += " \xE2\x80\x94 read it with offset=";  // U+2014 EM DASH
    append_number(out, n.read_offset);
    out += " limit=";
    append_number(out, n.read_limit);
    out += " for the omitted lines.]";
  } else {
    out += "Full text NOT saved (";
    append_reason(out, artifact.error);
    out += "); the omitted ";
    append_span(out, n.omitted);
    out += " cannot be read back.]";
  }
}

notice_size notice_bound(text_shape total, const artifact_ref& artifact) {
  // first != last everywhere, so every span prints as the longer "lines a-b" form; widest(n)
  // - 1 has as many digits as widest(n) because widest(n) >= 9.
  const std::size_t line = widest(total.lines);
  const line_span span{line - 1, line};
  notice_numbers worst;
  worst.total = total;
  worst.head = {1, line};
  worst.head_part_line = line;
  worst.tail_part_line = line;
  worst.tail = span;
  worst.omitted = span;
  worst.read_offset = line;
  worst.read_limit = line;
  worst.omitted_bytes = widest(total.bytes);

  std::string text;
  append_marker(text, worst);
  text.push_back('\n');
  append_footer(text, worst, artifact);
  return {text.size(), static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')) + 1};
}

}  // namespace handoff
