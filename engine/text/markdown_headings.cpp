// find_headings(): one pass over the line ends, a chunk at a time (see scan()), looking further
// only at lines that past up to 3 spaces start with '#', '`', '~', '=' or '-' (not "- text"):
// the only ones that can be an ATX heading, a fence or a setext underline. A report's other
// lines cost a few instructions each and no branch; each line is looked at once its end is
// known, so no line is searched for its end twice. A setext underline looks back at the lines
// above it, which is the one place the scan reads backwards (at most max_paragraph_lines lines).
#include "engine/text/markdown_headings.hpp"

#include <string.h>  // memrchr: a GNU extension, declared by glibc's <string.h> only

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <span>

#if defined(__SSE2__)
#include <immintrin.h>
#endif

namespace handoff {
namespace {

// A setext heading's paragraph is looked for this many lines up at most; a longer one is taken
// to start there.
constexpr std::size_t max_paragraph_lines = 32;

constexpr std::array<bool, 256> make_byte_set(std::string_view bytes) {
  std::array<bool, 256> set{};
  for (const char c : bytes) set[static_cast<unsigned char>(c)] = true;
  return set;
}
// What a line's text (past up to 3 spaces) starts with when it may be a heading or a fence.
constexpr std::array<bool, 256> block_starts = make_byte_set("#`~=-");

// True when the line at `start` may be an ATX heading, a fence or a setext underline: past up
// to 3 spaces it starts with one of block_starts, and not with "- " and more (a list item). The
// line must end in a '\n' (every byte read is the line's or that '\n').
inline bool worth_a_look(const char* data, std::size_t start) noexcept {
  std::size_t i = start;
  while (data[i] == ' ' && i - start < 4) ++i;
  if (i - start == 4 || !block_starts[static_cast<unsigned char>(data[i])]) return false;
  return data[i] != '-' || data[i + 1] != ' ' || data[i + 2] == ' ' || data[i + 2] == '\r' || data[i + 2] == '\n';
}

bool is_blank(char c) noexcept { return c == ' ' || c == '\t' || c == '\r'; }

// What a line above a setext underline is, for the paragraph the underline closes.
enum class line_kind {
  blank,      // only spaces: the paragraph starts below it
  paragraph,  // text: part of the paragraph
  block,      // an ATX heading, a fence, a thematic break or an underline: the paragraph starts below
  nested,     // a list item, a block quote, or indented 4 or more: no setext heading here
};

class scanner {
 public:
  scanner(std::string_view text, std::size_t first_line, std::size_t last_line, std::vector<heading>& out) noexcept
      : text_(text), first_line_(first_line), last_line_(last_line), out_(out) {}

  // Line `number` is text[start, end): `end` is its '\n' or the text's end. Called for the
  // lines worth_a_look() (on the hot path), and for the last line when no '\n' ends it.
  [[gnu::noinline]] void look_at(std::size_t number, std::size_t start, std::size_t end) {
    const std::size_t i = content_start(start, end);
    if (i == end) return;
    const char c = text_[i];
    if (in_fence_) {
      if (c != fence_char_) return;
      const std::size_t run = run_of(c, i, end);
      if (run >= fence_length_ && only_blanks(i + run, end)) in_fence_ = false;
      return;
    }
    if (opens_fence(i, end)) {
      in_fence_ = true;
      fence_char_ = c;
      fence_length_ = run_of(c, i, end);
    } else if (c == '#') {
      atx(number, i, end);
    } else if (c == '=' || c == '-') {
      setext(number, start, i, end);
    }
  }

 private:
  // End of the line starting at `start`: its '\n', or the text's end.
  std::size_t line_end(std::size_t start) const noexcept {
    const void* newline = std::memchr(text_.data() + start, '\n', text_.size() - start);
    return newline == nullptr ? text_.size() : offset_of(newline);
  }

  // Start of the line that ends at `end` (a '\n' or the text's end).
  std::size_t line_start(std::size_t end) const noexcept {
    if (end == 0) return 0;
    const void* newline = ::memrchr(text_.data(), '\n', end);
    return newline == nullptr ? 0 : offset_of(newline) + 1;
  }

  std::size_t offset_of(const void* p) const noexcept {
    return static_cast<std::size_t>(static_cast<const char*>(p) - text_.data());
  }

  // Past up to 3 spaces of indent; `end` when the line is indented 4 or more or blank.
  std::size_t content_start(std::size_t start, std::size_t end) const noexcept {
    std::size_t i = start;
    while (i < end && i - start < 4 && text_[i] == ' ') ++i;
    return i - start == 4 ? end : i;
  }

  std::size_t run_of(char c, std::size_t i, std::size_t end) const noexcept {
    std::size_t j = i;
    while (j < end && text_[j] == c) ++j;
    return j - i;
  }

  bool only_blanks(std::size_t i, std::size_t end) const noexcept {
    for (; i < end; ++i) {
      if (!is_blank(text_[i])) return false;
    }
    return true;
  }

  // Trailing blanks off [begin, end).
  std::size_t trim_end(std::size_t begin, std::size_t end) const noexcept {
    while (end > begin && is_blank(text_[end - 1])) --end;
    return end;
  }

  bool opens_fence(std::size_t i, std::size_t end) const noexcept {
    const char c = text_[i];
    if (c != '`' && c != '~') return false;
    const std::size_t run = run_of(c, i, end);
    if (run < 3) return false;
    return c == '~' || std::memchr(text_.data() + i + run, '`', end - i - run) == nullptr;
  }

  // The level of an ATX heading at `i` (its first '#'), or 0 when the line is not one.
  unsigned atx_level(std::size_t i, std::size_t end) const noexcept {
    const std::size_t hashes = run_of('#', i, end);
    if (hashes > 6) return 0;
    if (i + hashes < end && text_[i + hashes] != ' ' && text_[i + hashes] != '\t' && text_[i + hashes] != '\r') return 0;
    return static_cast<unsigned>(hashes);
  }

  void atx(std::size_t number, std::size_t i, std::size_t end) {
    const unsigned level = atx_level(i, end);
    if (level == 0 || number < first_line_ || number > last_line_) return;
    std::size_t begin = i + level;
    while (begin < end && is_blank(text_[begin])) ++begin;
    std::size_t stop = trim_end(begin, end);
    // A closing run of '#' goes when a blank precedes it (or it is all the title).
    std::size_t closing = stop;
    while (closing > begin && text_[closing - 1] == '#') --closing;
    if (closing == begin) {
      stop = begin;
    } else if (closing < stop && is_blank(text_[closing - 1])) {
      stop = trim_end(begin, closing);
    }
    if (stop > begin) out_.push_back(heading{number, level, begin, stop});
  }

  line_kind kind_of(std::size_t start, std::size_t end) const noexcept {
    std::size_t i = start;
    while (i < end && i - start < 4 && text_[i] == ' ') ++i;
    if (only_blanks(i, end)) return line_kind::blank;
    if (i - start == 4) return line_kind::nested;
    const char c = text_[i];
    if (c == '>') return line_kind::nested;
    if (opens_fence(i, end) || (c == '#' && atx_level(i, end) != 0)) return line_kind::block;
    if (c == '=' && only_blanks(i + run_of('=', i, end), end)) return line_kind::block;
    if (c == '-' || c == '*' || c == '_') {
      // A thematic break: three or more of one of them, spaces between allowed.
      std::size_t marks = 0;
      bool only = true;
      for (std::size_t j = i; j < end && only; ++j) {
        if (text_[j] == c) {
          ++marks;
        } else {
          only = is_blank(text_[j]);
        }
      }
      if (only && marks >= 3) return line_kind::block;
      if (c == '-' && only) return line_kind::block;  // "-" or "--": an underline itself
    }
    if ((c == '-' || c == '*' || c == '+') && (i + 1 == end || is_blank(text_[i + 1]))) return line_kind::nested;
    std::size_t digits = 0;
    while (i + digits < end && digits < 10 && text_[i + digits] >= '0' && text_[i + digits] <= '9') ++digits;
    if (digits > 0 && digits < 10 && i + digits < end && (text_[i + digits] == '.' || text_[i + digits] == ')') &&
        (i + digits + 1 == end || is_blank(text_[i + digits + 1]))) {
      return line_kind::nested;
    }
    return line_kind::paragraph;
  }

  // A line of only '=' or only '-' at `i` underlines the paragraph above it, if there is one.
  void setext(std::size_t number, std::size_t start, std::size_t i, std::size_t end) {
    const char c = text_[i];
    if (!only_blanks(i + run_of(c, i, end), end) || start == 0) return;
    // Up through the paragraph's lines to its first.
    std::size_t first_start = line_start(start - 1);
    if (kind_of(first_start, start - 1) != line_kind::paragraph) return;
    std::size_t lines = 1;
    while (first_start > 0 && lines < max_paragraph_lines) {
      const std::size_t above_start = line_start(first_start - 1);
      const line_kind above = kind_of(above_start, first_start - 1);
      if (above == line_kind::nested) return;
      if (above != line_kind::paragraph) break;
      first_start = above_start;
      ++lines;
    }
    const std::size_t heading_line = number - lines;
    if (heading_line < first_line_ || heading_line > last_line_) return;
    const std::size_t first_end = line_end(first_start);
    std::size_t begin = first_start;
    while (begin < first_end && (text_[begin] == ' ' || text_[begin] == '\t')) ++begin;
    const std::size_t stop = trim_end(begin, first_end);
    if (stop > begin) out_.push_back(heading{heading_line, c == '=' ? 1U : 2U, begin, stop});
  }

  std::string_view text_;
  std::size_t first_line_;
  std::size_t last_line_;
  std::vector<heading>& out_;
  bool in_fence_ = false;
  char fence_char_ = 0;
  std::size_t fence_length_ = 0;
};

}  // namespace

namespace {

#if defined(__SSE2__)

// Not a list item's "- " when the byte after "- " is one of these: "- " is then a setext
// underline, or an empty list item, and worth a look (what worth_a_look() says).
constexpr std::array<bool, 256> ends_a_dash = make_byte_set(" \r\n");

// worth_a_look() on the 8 bytes at `data` (the line's and what follows it), without a branch.
// Bytes past the line's '\n' never change the answer: '\n' is neither a space nor a block start.
// A line indented 4 or more may pass (its fifth byte is then looked at): look_at() turns it down.
inline bool worth_a_look_8(const char* data) noexcept {
  std::uint64_t word = 0;
  std::memcpy(&word, data, sizeof word);
  // Leading spaces become zero bytes; the bit set at byte 4 stops the count there.
  const auto shift = static_cast<unsigned>(__builtin_ctzll((word ^ 0x2020202020202020ULL) | (1ULL << 32))) & 0x38U;
  const std::uint64_t content = word >> shift;
  const bool list_item = ((content & 0xFFFFU) == ('-' | ' ' << 8)) & !ends_a_dash[(content >> 16) & 0xFFU];
  return block_starts[content & 0xFFU] & !list_item;
}

// A chunk of the text's line ends, found 64 bytes at a time.
// Offsets are the chunk's, in 16 bits: with the line numbers' scratch beside them, 8 KiB of
// cache, not the 40 KiB full offsets would take from the text's own.
struct line_ends {
  static constexpr std::size_t block = 64;
  static constexpr std::size_t blocks = 32;  // per chunk
  std::array<std::uint16_t, block * blocks + 1> at;  // offsets of '\n' bytes in the chunk, + 1 written ahead
  std::size_t count = 0;
};

// Writes the ends of the 64 bytes at `p`, whose '\n' bytes are the set bits of `mask`, at `to`;
// returns how many. The first is written whether there or not (what is written past the last is
// not counted), and a loop takes the rest: in a report (lines of 40-70 bytes) most blocks end no
// line or one, and the loop then does not run. Writing two ahead instead was slower by 10-20%
// on the bench's 37 KiB and 1 MiB texts (a scratch comparison of the two, thread CPU time), and
// within 3% either way on lines of 16 bytes. Without POPCNT (the x86-64 baseline), the bits are
// counted as they are taken.
template <bool popcnt>
[[gnu::always_inline]] inline std::size_t write_ends(std::uint16_t* to, std::size_t p, std::uint64_t mask) noexcept {
  // Bit 63 keeps ctz defined once the mask is spent.
  const auto next = [&] {
    const auto end = static_cast<std::uint16_t>(p + static_cast<unsigned>(__builtin_ctzll(mask | (1ULL << 63))));
    mask &= mask - 1;
    return end;
  };
  std::size_t count = 0;
  if constexpr (popcnt) {
    count = static_cast<std::size_t>(__builtin_popcountll(mask));
    to[0] = next();
    for (std::size_t i = 1; i < count; ++i) to[i] = next();
  } else {
    count += mask != 0 ? 1 : 0;
    to[0] = next();
    while (mask != 0) to[count++] = next();
  }
  return count;
}

// The line ends of the chunk text[p, p + 64 * blocks), blocks <= line_ends::blocks: in the
// x86-64 baseline, SSE2.
void fill_sse2(const char* data, std::size_t p, std::size_t blocks, line_ends& ends) noexcept {
  data += p;
  const __m128i newline = _mm_set1_epi8('\n');
  const auto bits = [&](std::size_t at) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(data + at));
    return static_cast<std::uint64_t>(static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(bytes, newline))));
  };
  std::size_t count = 0;
  for (std::size_t b = 0, at = 0; b < blocks; ++b, at += line_ends::block) {
    count += write_ends<false>(ends.at.data() + count, at,
                               bits(at) | bits(at + 16) << 16 | bits(at + 32) << 32 | bits(at + 48) << 48);
  }
  ends.count = count;
}

// The same with AVX2, BMI and POPCNT, where the CPU has them (nearly every x86-64 since 2013).
[[gnu::target("avx2")]] inline std::uint64_t newline_bits_avx2(const char* at) noexcept {
  const __m256i bytes = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(at));
  return static_cast<unsigned>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(bytes, _mm256_set1_epi8('\n'))));
}

[[gnu::target("avx2,bmi,popcnt")]] void fill_avx2(const char* data, std::size_t p, std::size_t blocks,
                                                  line_ends& ends) noexcept {
  data += p;
  std::size_t count = 0;
  for (std::size_t b = 0, at = 0; b < blocks; ++b, at += line_ends::block) {
    count += write_ends<true>(ends.at.data() + count, at,
                              newline_bits_avx2(data + at) | newline_bits_avx2(data + at + 32) << 32);
  }
  ends.count = count;
}

using fill_fn = void (*)(const char*, std::size_t, std::size_t, line_ends&) noexcept;

fill_fn fill_for(scan_isa isa) noexcept {
  static const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") &&
                           __builtin_cpu_supports("popcnt");
  return isa == scan_isa::sse2 || !avx2 ? fill_sse2 : fill_avx2;
}

#endif

// The scan of find_headings(), up to line stop_line (or a little past it); returns the lines it
// counted, all of the text's when it reached the end.
//
// A line end is a branch the CPU cannot predict, and most lines are no heading, so the lines
// are taken a chunk at a time, in three loops that mostly run the same way every time: the
// chunk's line ends (fill), which of those lines are worth a look (a store and an add per line,
// no branch), and a look at each of those, in order (a fence hides what follows it).
// `newlines`, when given, keeps the '\n' bytes near the text's ends.
std::size_t scan(std::string_view text, std::size_t first_line, std::size_t last_line, std::size_t stop_line,
                 std::vector<heading>& out, newline_index* newlines, [[maybe_unused]] scan_isa isa) {
  scanner s(text, first_line, last_line, out);
  const char* const data = text.data();
  std::size_t line = 1;  // the line that starts at `start`
  std::size_t start = 0;
  std::size_t p = 0;
#if defined(__SSE2__)
  const fill_fn fill = fill_for(isa);
  line_ends ends;
  std::array<std::uint16_t, line_ends::block * line_ends::blocks> looks;  // indexes into ends.at
  // Whole blocks are taken while 8 bytes past them are the text's: worth_a_look_8() may read them.
  while (p + line_ends::block + 8 <= text.size()) {
    const std::size_t blocks = std::min(line_ends::blocks, (text.size() - 8 - p) / line_ends::block);
    const std::size_t chunk = blocks * line_ends::block;
    fill(data, p, blocks, ends);
    if (newlines != nullptr) newlines->add(p, std::span(ends.at.data(), ends.count));
    std::size_t worth = 0;
    std::size_t line_start = start;
    for (std::size_t i = 0; i < ends.count; ++i) {
      looks[worth] = static_cast<std::uint16_t>(i);
      worth += worth_a_look_8(data + line_start) ? 1 : 0;
      line_start = p + ends.at[i] + 1;
    }
    for (std::size_t j = 0; j < worth; ++j) {
      const std::size_t i = looks[j];
      if (line + i > stop_line) return line + i;
      s.look_at(line + i, i == 0 ? start : p + ends.at[i - 1] + 1, p + ends.at[i]);
    }
    line += ends.count;
    start = line_start;
    p += chunk;
    if (line > stop_line) return line;
  }
#endif
  // The rest, a line at a time; data[start] is the '\n' of an empty line.
  while (const void* newline_at = std::memchr(data + p, '\n', text.size() - p)) {
    const auto end = static_cast<std::size_t>(static_cast<const char*>(newline_at) - data);
    if (newlines != nullptr) newlines->add(end);
    if (worth_a_look(data, start)) s.look_at(line, start, end);
    start = end + 1;
    p = start;
    if (++line > stop_line) return line;
  }
  if (start < text.size()) s.look_at(line, start, text.size());
  return line;
}

}  // namespace

std::vector<heading> find_headings(std::string_view text, std::size_t first_line, std::size_t last_line,
                                   scan_isa isa) {
  std::vector<heading> out;
  if (first_line > last_line) return out;
  // A setext heading on last_line may be underlined this many lines further down.
  constexpr std::size_t most = std::numeric_limits<std::size_t>::max();
  scan(text, first_line, last_line, last_line > most - max_paragraph_lines ? most : last_line + max_paragraph_lines,
       out, nullptr, isa);
  return out;
}

heading_scan scan_headings(std::string_view text, std::size_t edge_bytes, scan_isa isa) {
  constexpr std::size_t most = std::numeric_limits<std::size_t>::max();
  heading_scan result;
  result.newlines.reset(text.size(), edge_bytes);
  result.lines = scan(text, 1, most, most, result.headings, &result.newlines, isa);
  return result;
}

}  // namespace handoff
