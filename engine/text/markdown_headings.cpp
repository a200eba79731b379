// find_headings(): one pass over the text, 64 bytes at a time (see scan()). Vector compares find
// its line ends and the lines whose text, past up to 3 spaces, starts with '#', '`', '~', '=' or
// '-' (not "- text"): the only ones that can be an ATX heading, a fence or a setext underline.
// Only those are looked at further; a report's other lines cost nothing of their own. A setext
// underline looks back at the lines above it, which is the one place the scan reads backwards
// (at most max_paragraph_lines lines).
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

  // The start of the line whose text, past an indent of up to 3 spaces, begins at
  // text[content], or npos when text[content] is not where its line's text begins.
  std::size_t line_of_content(std::size_t content) const noexcept {
    std::size_t start = content;
    while (start > 0 && content - start < 3 && text_[start - 1] == ' ') --start;
    return start == 0 || text_[start - 1] == '\n' ? start : std::string_view::npos;
  }

  // Line `number`, from `start`, whose text begins at `content` (line_of_content): one of the
  // few the scan finds worth a look.
  [[gnu::noinline]] void look_at_content(std::size_t number, std::size_t start, std::size_t content) {
    look_at(number, start, line_end(content));
  }

  // Line `number` is text[start, end): `end` is its '\n' or the text's end.
  void look_at(std::size_t number, std::size_t start, std::size_t end) {
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

// How the scan goes on from one line to the next: where it is, and the text's line ends near its
// two ends that it keeps.
struct scan_state {
  std::size_t line = 1;   // the line that holds the next byte to read
  std::size_t stop_line;  // the scan may stop once it is past this line
  newline_index* newlines;
};

#if defined(__SSE2__)

// A 64-byte block of the text as bit masks, bit i for its byte i.
struct block_bits {
  std::uint64_t newline = 0;  // '\n'
  std::uint64_t starts = 0;   // one of "#`~=-", but not the '-' of "- " and a byte over ' ' (a list item)
};

// A block's masks read 2 bytes past it.
constexpr std::size_t block_reads = 64 + 2;

// The 16 bytes at `at` + shift, added at bit `shift` of the block's masks.
inline void add_bits(block_bits& b, const char* at, unsigned shift) noexcept {
  const auto load = [&](std::size_t ahead) {
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(at + shift + ahead));
  };
  const __m128i bytes = load(0);
  const auto is = [&](__m128i v, char c) { return _mm_cmpeq_epi8(v, _mm_set1_epi8(c)); };
  const auto bits = [&](__m128i m) {
    return static_cast<std::uint64_t>(static_cast<unsigned>(_mm_movemask_epi8(m))) << shift;
  };
  const __m128i after_dash = load(2);
  const __m128i list_item = _mm_andnot_si128(_mm_cmpeq_epi8(_mm_min_epu8(after_dash, _mm_set1_epi8(' ')), after_dash),
                                             _mm_and_si128(is(bytes, '-'), is(load(1), ' ')));
  const __m128i starts = _mm_or_si128(_mm_or_si128(is(bytes, '#'), is(bytes, '`')),
                                      _mm_or_si128(_mm_or_si128(is(bytes, '~'), is(bytes, '=')), is(bytes, '-')));
  b.newline |= bits(is(bytes, '\n'));
  b.starts |= bits(_mm_andnot_si128(list_item, starts));
}

// The block at `at`, in the x86-64 baseline (SSE2).
inline block_bits bits_sse2(const char* at) noexcept {
  block_bits b;
  for (unsigned shift = 0; shift < 64; shift += 16) add_bits(b, at, shift);
  return b;
}

// The same 32 bytes at a time, with AVX2 where the CPU has it (nearly every x86-64 since 2013).
// One of "#`~=" is the byte a table lookup by its low 4 bits gives ('=' and '-' share theirs;
// bytes over 0x7f give 0). Functions, not lambdas: a lambda would not have the target.
[[gnu::target("avx2")]] inline __m256i newlines_avx2(const char* at) noexcept {
  return _mm256_cmpeq_epi8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(at)), _mm256_set1_epi8('\n'));
}

[[gnu::target("avx2")]] inline __m256i starts_avx2(const char* at) noexcept {
  const __m256i bytes = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(at));
  const __m256i next = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(at + 1));
  const __m256i after_dash = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(at + 2));
  const __m256i starts_by_low_bits =
      _mm256_setr_epi8('`', 0, 0, '#', 0, 0, 0, 0, 0, 0, 0, 0, 0, '=', '~', 0,  //
                       '`', 0, 0, '#', 0, 0, 0, 0, 0, 0, 0, 0, 0, '=', '~', 0);
  const __m256i space = _mm256_set1_epi8(' ');
  const __m256i dash = _mm256_cmpeq_epi8(bytes, _mm256_set1_epi8('-'));
  const __m256i list_item =
      _mm256_andnot_si256(_mm256_cmpeq_epi8(_mm256_min_epu8(after_dash, space), after_dash),
                          _mm256_and_si256(dash, _mm256_cmpeq_epi8(next, space)));
  const __m256i starts =
      _mm256_or_si256(_mm256_cmpeq_epi8(_mm256_shuffle_epi8(starts_by_low_bits, bytes), bytes), dash);
  return _mm256_andnot_si256(list_item, starts);
}

[[gnu::target("avx2")]] inline std::uint64_t bits_avx2(__m256i low, __m256i high) noexcept {
  return static_cast<std::uint64_t>(static_cast<unsigned>(_mm256_movemask_epi8(high))) << 32 |
         static_cast<unsigned>(_mm256_movemask_epi8(low));
}

[[gnu::target("avx2")]] inline block_bits bits_avx2(const char* at) noexcept {
  return block_bits{bits_avx2(newlines_avx2(at), newlines_avx2(at + 32)),
                    bits_avx2(starts_avx2(at), starts_avx2(at + 32))};
}

// The sum of the 32 byte counters of `counts`.
[[gnu::target("avx2")]] inline std::size_t sum_avx2(__m256i counts) noexcept {
  const __m256i sums = _mm256_sad_epu8(counts, _mm256_setzero_si256());
  const __m128i pairs = _mm_add_epi64(_mm256_castsi256_si128(sums), _mm256_extracti128_si256(sums, 1));
  return static_cast<std::size_t>(_mm_cvtsi128_si64(pairs)) +
         static_cast<std::size_t>(_mm_extract_epi64(pairs, 1));
}

// The set bits of `mask`, with POPCNT or without.
template <bool popcnt>
[[gnu::always_inline]] inline std::size_t count_bits(std::uint64_t mask) noexcept {
  if constexpr (popcnt) {
    return static_cast<std::size_t>(__builtin_popcountll(mask));
  } else {
    std::size_t n = 0;
    for (; mask != 0; mask &= mask - 1) ++n;
    return n;
  }
}

// Line ends of a chunk kept for the newline index, as offsets into it: in 16 bits, 4 KiB of
// cache rather than the 16 KiB of full offsets.
struct chunk_ends {
  static constexpr std::size_t block = 64;
  static constexpr std::size_t blocks = 32;
  std::array<std::uint16_t, block * blocks + 1> at;  // + 1: write_ends() writes one ahead
  std::size_t count = 0;
};

// Writes the ends of the block at `p` in its chunk, whose '\n' bytes are the set bits of `mask`,
// at `to`; returns how many. The first is written whether there or not (what is written past the
// last is not counted), and a loop takes the rest: in a report (lines of 40-70 bytes) most blocks
// end no line or one, and the loop then does not run.
template <bool popcnt>
[[gnu::always_inline]] inline std::size_t write_ends(std::uint16_t* to, std::size_t p, std::uint64_t mask) noexcept {
  // Bit 63 keeps ctz defined once the mask is spent.
  const auto next = [&] {
    const auto end = static_cast<std::uint16_t>(p + static_cast<unsigned>(__builtin_ctzll(mask | (1ULL << 63))));
    mask &= mask - 1;
    return end;
  };
  const std::size_t count = count_bits<popcnt>(mask);
  to[0] = next();
  for (std::size_t i = 1; i < count; ++i) to[i] = next();
  return count;
}

// Looks at the lines worth a look among the block at text offset `at` whose first byte is on
// line `line`: `starts` holds the candidates, `newline` the block's '\n' bytes. False once past
// the scan's stop line.
template <bool popcnt>
[[gnu::always_inline]] inline bool look_in_block(scanner& s, scan_state& st, std::size_t line, std::size_t at,
                                                 std::uint64_t newline, std::uint64_t starts) {
  for (; starts != 0; starts &= starts - 1) {
    const auto bit = static_cast<unsigned>(__builtin_ctzll(starts));
    const std::size_t start = s.line_of_content(at + bit);
    if (start == std::string_view::npos) continue;
    const std::size_t number = line + count_bits<popcnt>(newline & ((1ULL << bit) - 1));
    if (number > st.stop_line) {
      st.line = number;
      return false;
    }
    s.look_at_content(number, start, at + bit);
  }
  return true;
}

// The chunk text[p, p + 64 * blocks), blocks <= chunk_ends::blocks, read at `bytes` (the text's
// own, or a copy of its last bytes padded with zero bytes, none of which the masks look for),
// each block's masks made whole: where the newline index keeps its line ends, and in the x86-64
// baseline.
template <bool popcnt, block_bits (*bits)(const char*) noexcept>
[[gnu::always_inline]] inline bool scan_chunk(scanner& s, scan_state& st, const char* bytes, std::size_t p,
                                              std::size_t blocks) {
  chunk_ends ends;
  const bool keep = st.newlines != nullptr && st.newlines->wants(p, p + blocks * chunk_ends::block);
  for (std::size_t b = 0; b < blocks; ++b) {
    const block_bits m = bits(bytes + b * chunk_ends::block);
    if (keep) ends.count += write_ends<popcnt>(ends.at.data() + ends.count, b * chunk_ends::block, m.newline);
    if (!look_in_block<popcnt>(s, st, st.line, p + b * chunk_ends::block, m.newline, m.starts)) return false;
    st.line += count_bits<popcnt>(m.newline);
  }
  if (keep) st.newlines->add(p, std::span(ends.at.data(), ends.count));
  return st.line <= st.stop_line;
}

bool scan_chunk_sse2(scanner& s, scan_state& st, const char* bytes, std::size_t p, std::size_t blocks) {
  return scan_chunk<false, bits_sse2>(s, st, bytes, p, blocks);
}

// The same with AVX2. Where no line end is kept (most of a long text), the lines are counted
// in the vector registers, a byte counter per lane, and a block's masks are made only when it
// has a line worth a look (one block in ten, or fewer, in a report).
[[gnu::target("avx2,bmi,popcnt")]] bool scan_chunk_avx2(scanner& s, scan_state& st, const char* bytes, std::size_t p,
                                                        std::size_t blocks) {
  if (st.newlines != nullptr && st.newlines->wants(p, p + blocks * chunk_ends::block))
    return scan_chunk<true, bits_avx2>(s, st, bytes, p, blocks);
  // Each lane counts at most 2 a block, 64 a chunk: a byte holds it.
  static_assert(2 * chunk_ends::blocks < 256);
  __m256i counts = _mm256_setzero_si256();
  for (std::size_t b = 0; b < blocks; ++b) {
    const char* const at = bytes + b * chunk_ends::block;
    const __m256i newline_low = newlines_avx2(at);
    const __m256i newline_high = newlines_avx2(at + 32);
    const __m256i starts_low = starts_avx2(at);
    const __m256i starts_high = starts_avx2(at + 32);
    if (!_mm256_testz_si256(_mm256_or_si256(starts_low, starts_high), _mm256_or_si256(starts_low, starts_high)) &&
        !look_in_block<true>(s, st, st.line + sum_avx2(counts), p + b * chunk_ends::block,
                             bits_avx2(newline_low, newline_high), bits_avx2(starts_low, starts_high)))
      return false;
    // A compare's true is -1: subtracting it counts one.
    counts = _mm256_sub_epi8(_mm256_sub_epi8(counts, newline_low), newline_high);
  }
  st.line += sum_avx2(counts);
  return st.line <= st.stop_line;
}

#endif

// The scan of find_headings(), up to line stop_line (or a little past it); returns the lines it
// counted, all of the text's when it reached the end.
//
// A line end is a branch the CPU cannot predict, and most lines are no heading, so the text is
// taken 64 bytes at a time: its line ends, and the bytes where a line worth a look starts its
// text, come out of vector compares as bit masks, and only those lines are looked at (a fence
// hides what follows it, so in order). No work is done per line that is not. `newlines`, when
// given, keeps the '\n' bytes near the text's ends.
std::size_t scan(std::string_view text, std::size_t first_line, std::size_t last_line, std::size_t stop_line,
                 std::vector<heading>& out, newline_index* newlines, [[maybe_unused]] scan_isa isa) {
  scanner s(text, first_line, last_line, out);
  scan_state st{1, stop_line, newlines};
#if defined(__SSE2__)
  static const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") &&
                           __builtin_cpu_supports("popcnt");
  const auto chunk = isa == scan_isa::sse2 || !avx2 ? scan_chunk_sse2 : scan_chunk_avx2;
  constexpr std::size_t block = chunk_ends::block;
  // Blocks whose masks read only the text's bytes, then the rest from a padded copy.
  const std::size_t whole = text.size() >= block_reads ? (text.size() - block_reads) / block + 1 : 0;
  std::size_t p = 0;
  for (std::size_t left = whole; left > 0;) {
    const std::size_t blocks = std::min(left, chunk_ends::blocks);
    if (!chunk(s, st, text.data() + p, p, blocks)) return st.line;
    p += blocks * block;
    left -= blocks;
  }
  std::array<char, 4 * block> rest{};  // what is left, under block + block_reads bytes, and what its masks read
  if (text.size() > p) std::memcpy(rest.data(), text.data() + p, text.size() - p);  // data() may be null
  chunk(s, st, rest.data(), p, (text.size() - p + block - 1) / block);
  return st.line;
#else
  // Every line looked at, where there are no vector compares.
  const char* const data = text.data();
  std::size_t start = 0;
  while (const void* newline_at = std::memchr(data + start, '\n', text.size() - start)) {
    const auto end = static_cast<std::size_t>(static_cast<const char*>(newline_at) - data);
    if (newlines != nullptr) newlines->add(end);
    s.look_at(st.line, start, end);
    start = end + 1;
    if (++st.line > stop_line) return st.line;
  }
  s.look_at(st.line, start, text.size());
  return st.line;
#endif
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
