// One entry of the queue's journal (docs/design.md §8): a fixed header, a small JSON "meta"
// part saying what happened, and for a completion whose text is kept inline, the text itself.
//
//   offset  size  field
//        0     4  magic "HOJ1"
//        4     1  kind (entry_kind)
//        5     3  zero
//        8     4  meta bytes, little endian
//       12     4  zero
//       16     8  text bytes, little endian (0 unless a put with its text inline)
//       24    32  the first 32 hex digits of the SHA-256 of bytes 0..24 and the meta: a torn or
//                 damaged header or meta is seen
//       56        meta, then text. The text is covered by the SHA-256 its put's meta names.
//
// A journal is a run of entries; recovery reads them in order and stops at the first one that
// does not check out (a torn tail: everything before it was fsynced, nothing after it was
// acknowledged).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace handoff {

enum class entry_kind : std::uint8_t {
  put = 1,           // a completion was taken (meta: the record; text inline or in texts/)
  retire = 2,        // a result left the queue: delivered, consumed or cancelled (the tombstone)
  delivery = 3,      // an auto-delivery was sent (meta: the stored delivery)
  acknowledged = 4,  // the parent acknowledged a delivery (meta: its id)
  mark = 5,          // the first entry of a new segment: the next seq, so seqs keep
                     // increasing when every older segment is gone
};

inline constexpr std::size_t entry_header_bytes = 56;
// Largest meta part written or accepted: a record, tombstone or rendered delivery.
inline constexpr std::size_t max_entry_meta_bytes = 16 * 1024 * 1024;

// The header and meta of an entry, ready to be written; the text (if any) follows it.
std::string encode_entry_head(entry_kind kind, std::string_view meta, std::size_t text_bytes);

// An entry read back from `bytes` at `offset`.
struct decoded_entry {
  entry_kind kind{};
  std::string_view meta;
  std::size_t text_offset = 0;  // where its text starts in `bytes`
  std::size_t text_bytes = 0;
  std::size_t next = 0;         // offset just past the entry
};
// nullopt with `why` when no whole, intact entry starts at `offset` (short, bad magic, bad
// checksum, unknown kind, oversized). Does not verify the text (its put meta names its hash).
std::optional<decoded_entry> decode_entry(std::string_view bytes, std::size_t offset,
                                          std::string& why);

}  // namespace handoff
