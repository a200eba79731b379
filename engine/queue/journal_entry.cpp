#include "engine/queue/journal_entry.hpp"

#include <cstring>
#include <string>

#include "engine/fs/sha256.hpp"

namespace handoff {

namespace {

constexpr std::string_view magic = "HOJ1";
constexpr std::size_t checked_bytes = 24;  // header bytes the checksum covers, before itself

void put_le(char* out, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

std::uint64_t get_le(const char* in, int bytes) {
  std::uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(in[i]);
  return v;
}

// The first 32 hex digits (128 bits) of the SHA-256: ample to tell a torn write from a whole one.
std::string checksum(std::string_view head, std::string_view meta) {
  sha256 h;
  h.update(head.substr(0, checked_bytes));
  h.update(meta);
  return h.final_hex().substr(0, 32);
}

bool known(std::uint8_t kind) { return kind >= 1 && kind <= 5; }

}  // namespace

std::string encode_entry_head(entry_kind kind, std::string_view meta, std::size_t text_bytes) {
  std::string out(entry_header_bytes, '\0');
  std::memcpy(out.data(), magic.data(), magic.size());
  out[4] = static_cast<char>(kind);
  put_le(out.data() + 8, meta.size(), 4);
  put_le(out.data() + 16, text_bytes, 8);
  const auto sum = checksum(out, meta);
  std::memcpy(out.data() + checked_bytes, sum.data(), sum.size());
  out.append(meta);
  return out;
}

std::optional<decoded_entry> decode_entry(std::string_view bytes, std::size_t offset,
                                          std::string& why) {
  const std::size_t left = bytes.size() - offset;
  if (left < entry_header_bytes) {
    why = "a header cut short (" + std::to_string(left) + " bytes)";
    return std::nullopt;
  }
  const std::string_view head = bytes.substr(offset, entry_header_bytes);
  if (head.substr(0, 4) != magic) {
    why = "no entry starts here";
    return std::nullopt;
  }
  const auto kind = static_cast<std::uint8_t>(head[4]);
  const std::uint64_t meta_bytes = get_le(head.data() + 8, 4);
  const std::uint64_t text_bytes = get_le(head.data() + 16, 8);
  if (meta_bytes > max_entry_meta_bytes || meta_bytes > left - entry_header_bytes ||
      text_bytes > left - entry_header_bytes - meta_bytes) {
    why = "an entry cut short";
    return std::nullopt;
  }
  const std::string_view meta = bytes.substr(offset + entry_header_bytes, meta_bytes);
  const auto sum = checksum(head, meta);
  if (std::memcmp(sum.data(), head.data() + checked_bytes, sum.size()) != 0) {
    why = "its checksum does not match";
    return std::nullopt;
  }
  if (!known(kind) || head[5] != 0 || head[6] != 0 || head[7] != 0) {
    why = "an unknown kind of entry";
    return std::nullopt;
  }
  decoded_entry e;
  e.kind = static_cast<entry_kind>(kind);
  e.meta = meta;
  e.text_offset = offset + entry_header_bytes + meta_bytes;
  e.text_bytes = text_bytes;
  e.next = e.text_offset + text_bytes;
  return e;
}

}  // namespace handoff
