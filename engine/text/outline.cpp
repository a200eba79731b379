// outline::choose() and the block's wording. Every size is the exact length of what
// append_to() writes: an entry's cost is its rendered bytes, and the "more" line is reserved
// at its widest (every heading left out, "levels 1-6") before the entries are chosen.
#include "engine/text/outline.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <limits>
#include <string>

#include "utf8.hpp"

namespace handoff {

using namespace std::literals;

namespace {

constexpr std::string_view clip_mark = "...";

// What each byte of a title is shown as: control characters as a space, '[' and ']' as '(' and
// ')' (an entry then never reads as the marker or the footer), every other byte as itself.
constexpr std::array<unsigned char, 256> title_byte = [] {
  std::array<unsigned char, 256> shown{};
  for (std::size_t b = 0; b < shown.size(); ++b) shown[b] = static_cast<unsigned char>(b);
  for (std::size_t b = 0; b < 0x20; ++b) shown[b] = ' ';
  shown[0x7F] = ' ';
  shown['['] = '(';
  shown[']'] = ')';
  return shown;
}();

void append_header(std::string& out, const artifact_ref& artifact) {
  out += "[Omitted sections, at their lines of the full text ("sv;
  if (artifact.saved) {
    out += artifact.profile->line_jump;
    out += "):"sv;
  } else {
    out += "not saved):"sv;
  }
}

std::size_t header_bytes(const artifact_ref& artifact) {
  std::string header;
  append_header(header, artifact);
  return header.size() + 1;
}

std::string_view title_of(const heading& h, std::string_view text) noexcept {
  return text.substr(h.title_begin, h.title_end - h.title_begin);
}

std::size_t digits(std::size_t n) noexcept {
  std::size_t count = 1;
  for (; n >= 10; n /= 10) ++count;
  return count;
}

// An entry's bytes in the block: "  " + append_outline_entry() + '\n'.
std::size_t entry_bytes(const heading& h, std::string_view text) noexcept {
  const std::string_view title = title_of(h, text);
  const std::size_t shown = title.size() <= max_outline_title_bytes
                                ? title.size()
                                : utf8_floor(title, max_outline_title_bytes - clip_mark.size()) + clip_mark.size();
  return 2 + digits(h.line) + 1 + h.level + 1 + shown + 1;
}

void append_more(std::string& out, std::size_t count, unsigned lowest, unsigned highest, line_span omitted,
                 const artifact_ref& artifact) {
  out += "  +"sv;
  out += std::to_string(count);
  out += " more ("sv;
  if (lowest == highest) {
    out += "level "sv;
    out += std::to_string(lowest);
  } else {
    out += "levels "sv;
    out += std::to_string(lowest);
    out.push_back('-');
    out += std::to_string(highest);
  }
  out.push_back(')');
  if (!artifact.saved) {
    out += ", not listed]"sv;
    return;
  }
  out += ": "sv;
  out += artifact.profile->bash_tool;
  out += " `"sv;
  append_shell_word(out, artifact.reader);
  out += " read --outline "sv;
  out += std::to_string(omitted.first);
  out.push_back('-');
  out += std::to_string(omitted.last);
  out.push_back(' ');
  append_shell_word(out, artifact.path);
  out += "`]"sv;
}

std::size_t more_bytes(std::size_t count, unsigned lowest, unsigned highest, line_span omitted,
                       const artifact_ref& artifact) {
  std::string more;
  append_more(more, count, lowest, highest, omitted, artifact);
  return more.size() + 1;
}

// Index j of k spread evenly over m (k <= m): the middle of the j-th of k equal parts.
std::size_t spread(std::size_t j, std::size_t k, std::size_t m) noexcept { return (2 * j + 1) * m / (2 * k); }

}  // namespace

void append_outline_entry(std::string& out, const heading& h, std::string_view text) {
  // Composed in a buffer of the longest entry, then appended at once.
  std::array<char, std::numeric_limits<std::size_t>::digits10 + 1 + 1 + 6 + 1 + max_outline_title_bytes> entry;
  char* at = std::to_chars(entry.data(), entry.data() + entry.size(), h.line).ptr;
  *at++ = ' ';
  at = std::fill_n(at, std::min(h.level, 6U), '#');
  *at++ = ' ';
  std::string_view title = title_of(h, text);
  const bool clipped = title.size() > max_outline_title_bytes;
  if (clipped) title = title.substr(0, utf8_floor(title, max_outline_title_bytes - clip_mark.size()));
  for (const char c : title) *at++ = static_cast<char>(title_byte[static_cast<unsigned char>(c)]);
  if (clipped) at = std::copy(clip_mark.begin(), clip_mark.end(), at);
  out.append(entry.data(), at);
}

outline_size outline::full_size(std::span<const heading> headings, std::string_view text,
                                const artifact_ref& artifact) {
  if (headings.empty()) return {};
  outline_size size{header_bytes(artifact) + 1, 1 + headings.size()};  // + the closing ']'
  for (const heading& h : headings) size.bytes += entry_bytes(h, text);
  return size;
}

outline outline::choose(std::span<const heading> headings, std::string_view text, line_span omitted,
                        const artifact_ref& artifact, outline_size room) {
  outline o;
  o.text_ = text;
  o.artifact_ = &artifact;
  o.omitted_ = omitted;
  if (headings.empty()) return o;
  // Each entry's bytes, measured once: for the whole outline (full_size()) and the choice.
  std::vector<std::size_t> cost(headings.size());
  const std::size_t header = header_bytes(artifact);
  outline_size full{header + 1, 1 + headings.size()};  // + the closing ']'
  for (std::size_t i = 0; i < headings.size(); ++i) {
    cost[i] = entry_bytes(headings[i], text);
    full.bytes += cost[i];
  }
  if (full.bytes <= room.bytes && full.lines <= room.lines) {
    o.listed_.assign(headings.begin(), headings.end());
    o.size_ = full;
    return o;
  }
  const std::size_t fixed = header + more_bytes(headings.size(), 1, 6, omitted, artifact);
  if (room.lines < 2 || room.bytes < fixed) return o;
  std::size_t bytes_left = room.bytes - fixed;
  std::size_t lines_left = room.lines - 2;

  std::vector<bool> chosen(headings.size(), false);
  std::vector<std::size_t> at_level;
  for (unsigned level = 1; level <= 6; ++level) {
    at_level.clear();
    std::size_t bytes = 0;
    for (std::size_t i = 0; i < headings.size(); ++i) {
      if (headings[i].level != level) continue;
      at_level.push_back(i);
      bytes += cost[i];
    }
    if (at_level.empty()) continue;
    if (bytes <= bytes_left && at_level.size() <= lines_left) {
      for (const std::size_t i : at_level) chosen[i] = true;
      bytes_left -= bytes;
      lines_left -= at_level.size();
      continue;
    }
    // The most of this level, spread evenly, that fit.
    const std::size_t m = at_level.size();
    const auto spread_bytes = [&](std::size_t k) {
      std::size_t sum = 0;
      for (std::size_t j = 0; j < k; ++j) sum += cost[at_level[spread(j, k, m)]];
      return sum;
    };
    std::size_t lo = 0;
    std::size_t hi = std::min(m, lines_left);
    while (lo < hi) {
      const std::size_t mid = (lo + hi + 1) / 2;
      if (spread_bytes(mid) <= bytes_left) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    for (std::size_t j = 0; j < lo; ++j) chosen[at_level[spread(j, lo, m)]] = true;
    break;
  }

  o.size_ = {header, 1};
  for (std::size_t i = 0; i < headings.size(); ++i) {
    if (chosen[i]) {
      o.listed_.push_back(headings[i]);
      o.size_.bytes += cost[i];
      ++o.size_.lines;
      continue;
    }
    const unsigned level = headings[i].level;
    o.lowest_left_out_ = o.left_out_ == 0 ? level : std::min(o.lowest_left_out_, level);
    o.highest_left_out_ = o.left_out_ == 0 ? level : std::max(o.highest_left_out_, level);
    ++o.left_out_;
  }
  o.size_.bytes += more_bytes(o.left_out_, o.lowest_left_out_, o.highest_left_out_, omitted, artifact);
  ++o.size_.lines;
  return o;
}

void outline::append_to(std::string& out) const {
  if (empty()) return;
  append_header(out, *artifact_);
  out.push_back('\n');
  for (std::size_t i = 0; i < listed_.size(); ++i) {
    out += "  "sv;
    append_outline_entry(out, listed_[i], text_);
    if (left_out_ == 0 && i + 1 == listed_.size()) out.push_back(']');
    out.push_back('\n');
  }
  if (left_out_ > 0) {
    append_more(out, left_out_, lowest_left_out_, highest_left_out_, omitted_, *artifact_);
    out.push_back('\n');
  }
}

}  // namespace handoff
