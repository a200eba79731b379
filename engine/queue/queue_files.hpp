// The queue's JSON encodings (docs/design.md §8), one object each with "format": 1: the meta part
// of each journal entry (journal_entry.hpp), the tombstone files in done/, and, read only, the
// records/ and deliveries/ files of a queue written before the journal (queue_legacy.cpp moves
// them into it once). Decoding is strict, because recovery drops whatever does not decode.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "engine/queue/queue_records.hpp"

namespace handoff {

// Largest queue file read (a tombstone in done/, an older queue's record or delivery), bytes.
// Default 16 MiB: far above a title, an error text and a rendered batch, small enough to read
// whole.
inline constexpr std::size_t max_queue_file_bytes = 16 * 1024 * 1024;

// Key of a completion: sha256(parent_id "\0" child_id) in hex. done/<key> is named by it (as an
// older queue's records/<key>.json were), so no client string ever names a file.
std::string completion_key(std::string_view parent_id, std::string_view child_id);

// Encoders throw std::invalid_argument when a string is not valid UTF-8.
std::string encode_tombstone(const tombstone& t);
std::string encode_delivery(const stored_delivery& d);

// Where a held result's final text is kept: inside its journal entry, or as texts/<sha256>.txt.
enum class text_place { in_journal, in_file };

// The meta parts of journal entries (journal_entry.hpp): a put is a record plus where its
// text is; a retire is a tombstone plus the completion's key; an acknowledgement names its
// delivery (a delivery entry's meta is encode_delivery's).
std::string encode_put(const held_result& r, text_place where);
// Throws the std::invalid_argument encode_put would for a record that cannot be stored (a
// string that is not UTF-8), without encoding it.
void check_storable(const held_result& r);
std::string encode_retire(std::string_view key, const tombstone& t);
std::string encode_acknowledged(std::string_view delivery_id);
std::string encode_mark(std::uint64_t next_seq);

struct decoded_put {
  held_result held;
  text_place where = text_place::in_journal;
};
struct decoded_retire {
  std::string key;
  tombstone t;
};

// Decoders return nullopt and say why in `why` when the bytes are not such a file or meta.
// An older queue's records/<key>.json (r.shape is not stored: the text is measured).
std::optional<held_result> decode_record(std::string_view bytes, std::string& why);
std::optional<tombstone> decode_tombstone(std::string_view bytes, std::string& why);
std::optional<stored_delivery> decode_delivery(std::string_view bytes, std::string& why);
std::optional<decoded_put> decode_put(std::string_view bytes, std::string& why);
std::optional<decoded_retire> decode_retire(std::string_view bytes, std::string& why);
std::optional<std::string> decode_acknowledged(std::string_view bytes, std::string& why);
std::optional<std::uint64_t> decode_mark(std::string_view bytes, std::string& why);  // the next seq

}  // namespace handoff
