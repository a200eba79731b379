// queue_recovery (its contract: queue_recovery.hpp): rebuilds the queue's memory by replaying
// the journal, cuts the tail a crash tore, and removes what nothing uses any more. Every removal
// is reported in `notes`.
#include "engine/queue/queue_recovery.hpp"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "engine/fs/atomic_file.hpp"
#include "engine/fs/mapped_file.hpp"
#include "engine/queue/queue_disk.hpp"
#include "engine/fs/sha256.hpp"

namespace handoff {

// What the replay gathers beyond the index, judged once the whole journal is read.
struct queue_recovery::replay_state {
  std::vector<std::string>& notes;
  std::uint64_t& max_seq;
  std::unordered_map<std::string, tombstone> retired;                // key -> as the journal says
  std::unordered_map<std::string, std::optional<text_shape>> files;  // sha256 -> checked text file
  std::unordered_map<std::uint64_t, std::string> textless;           // seq -> its put, text file missing
};

std::uint64_t queue_recovery::run(std::vector<std::string>& notes) {
  std::uint64_t max_seq = 0;
  names_after_temps(p_.queue_fd, p_.dir.filename().string(), notes);  // the expiry time's temp file
  p_.tombstones.count_files(notes);
  replay(notes, max_seq);
  p_.journal.start_appending();
  migrate_legacy(notes, max_seq);
  p_.index.prune_deliveries();  // deliveries go on with the results still held
  settle_texts(notes);
  for (const std::string& name : p_.journal.strangers())
    notes.push_back("left alone journal/" + name + ": not a file the queue writes");
  return max_seq;
}

void queue_recovery::replay(std::vector<std::string>& notes, std::uint64_t& max_seq) {
  const std::vector<std::uint64_t> segments = p_.journal.segments();
  replay_state state{notes, max_seq, {}, {}, {}};
  for (std::size_t i = 0; i < segments.size(); ++i) replay_segment(segments[i], i + 1 == segments.size(), state);
  for (const auto& [seq, shown] : state.textless) {
    const queue_index::entry* held = p_.index.find(seq);
    if (held == nullptr) continue;  // retired later on: nothing is lost
    notes.push_back("dropped the completion " + shown + ": its text texts/" + held->held.sha256 +
                    ".txt is missing or does not match its hash");
    p_.index.drop(seq);
  }
  settle_tombstones(state);
}

// One segment, entry by entry; the first entry that does not check out ends it, and the segment
// is cut there. Zeros where an entry would start, to the end of the file, are the space
// journal::zero_ahead() wrote: the entries end there, nothing is cut. A put whose text does not
// match its hash with only zeros after it is the tail of a group a crash interrupted (its
// header reached the disk, its text did not): cut too. Elsewhere such a put is dropped alone.
void queue_recovery::replay_segment(std::uint64_t segment, bool last, replay_state& state) {
  const std::string shown = "journal/" + segment_name(segment);
  const std::size_t size = p_.journal.segment_size(segment);
  const mapped_file whole(p_.journal.segment_fd(segment), 0, size);
  const std::string_view bytes = whole.view();
  const auto zeros_from = [&](std::size_t from) {
    return std::all_of(bytes.begin() + static_cast<std::ptrdiff_t>(std::min(from, bytes.size())), bytes.end(),
                       [](char c) { return c == '\0'; });
  };
  const auto cut = [&](std::size_t at, const std::string& why) {
    state.notes.push_back("cut " + shown + " at byte " + std::to_string(at) + " of " + std::to_string(size) + ": " +
                          why +
                          (last ? " (the tail of a group a crash interrupted; none of it was acknowledged)"
                                : " (a damaged segment: what follows is lost)"));
    p_.journal.cut(segment, at);
  };
  std::size_t at = 0;
  while (at < bytes.size()) {
    std::string why;
    const auto e = decode_entry(bytes, at, why);
    if (!e) {
      if (zeros_from(at)) return p_.journal.end_at(segment, at);
      return cut(at, why);
    }
    const std::string where = shown + " at byte " + std::to_string(at);
    if (!replay_entry(*e, bytes, segment, where, state)) {
      if (zeros_from(e->next)) return cut(at, "its text does not match its hash");
      state.notes.push_back("dropped the completion " + where + ": its text does not match its hash");
    }
    at = e->next;
  }
}

bool queue_recovery::replay_entry(const decoded_entry& e, std::string_view bytes, std::uint64_t segment,
                                 const std::string& shown, replay_state& state) {
  std::string why;
  switch (e.kind) {
    case entry_kind::put:
      if (auto p = decode_put(e.meta, why)) return replay_put(std::move(*p), e, bytes, segment, shown, state);
      break;
    case entry_kind::retire:
      if (auto r = decode_retire(e.meta, why)) {
        state.max_seq = std::max(state.max_seq, r->t.seq);
        if (const queue_index::entry* held = p_.index.find(r->key); held != nullptr && held->held.seq == r->t.seq)
          p_.index.drop(r->t.seq);
        state.retired[r->key] = r->t;
        return true;
      }
      break;
    case entry_kind::delivery:
      if (auto d = decode_delivery(e.meta, why)) {
        for (const std::uint64_t seq : d->seqs) state.max_seq = std::max(state.max_seq, seq);
        p_.index.add_delivery(std::move(*d), segment);
        return true;
      }
      break;
    case entry_kind::mark:
      if (auto next = decode_mark(e.meta, why)) {
        state.max_seq = std::max(state.max_seq, *next - 1);
        return true;
      }
      break;
    case entry_kind::acknowledged:
      if (auto id = decode_acknowledged(e.meta, why)) {
        if (const auto sent_in = p_.index.end_delivery(*id)) p_.index.left(*sent_in);
        return true;
      }
      break;
  }
  state.notes.push_back("skipped the entry " + shown + ": " + why);
  return true;
}

bool queue_recovery::replay_put(decoded_put p, const decoded_entry& e, std::string_view bytes, std::uint64_t segment,
                               const std::string& shown, replay_state& state) {
  held_result& r = p.held;
  const std::string key = completion_key(r.info.parent_id, r.info.child_id);
  const auto drop = [&](const std::string& why) {
    state.notes.push_back("dropped the completion " + shown + ": " + why);
    return true;
  };
  state.max_seq = std::max(state.max_seq, r.seq);
  if (const std::string* taken = p_.index.key_of(r.seq); taken != nullptr && *taken != key)
    return drop("its seq " + std::to_string(r.seq) + " is taken by another completion");
  const queue_index::location where{segment, e.text_offset, p.where};
  if (p.where == text_place::in_journal) {
    const std::string_view text = bytes.substr(e.text_offset, e.text_bytes);
    if (sha256_hex(text) != r.sha256) return false;
    r.shape = measure(text);
  } else {
    auto [it, fresh] = state.files.try_emplace(r.sha256);
    if (fresh) it->second = check_text_file(r.sha256, state.notes);
    if (it->second) {
      r.shape = *it->second;
    } else {
      // A text file goes with the last result using it, so a later retire entry may explain
      // its absence: judged once the whole journal is read.
      state.textless[r.seq] = shown;
    }
  }
  p_.index.hold(key, queue_index::entry{std::move(r), where});  // a copy moved forward replaces the older one
  return true;
}

std::optional<text_shape> queue_recovery::check_text_file(const std::string& sha, std::vector<std::string>& notes) {
  const std::optional<mapped_file> text = p_.texts.open(sha);
  if (!text) return std::nullopt;
  if (sha256_hex(text->view()) != sha) {
    const std::string name = sha + ".txt";
    std::string err = remove_name(p_.texts_fd, name, "texts/" + name);
    notes.push_back(err.empty() ? "dropped texts/" + name + ": its content does not match its name" : std::move(err));
    return std::nullopt;
  }
  return measure(text->view());
}

// The journal says what left; done/ is the index resends are checked against. A tombstone
// file for a result the journal still holds wins (it was delivered; the retire entry went with
// a removed segment); one the journal has and done/ lacks is written again.
void queue_recovery::settle_tombstones(replay_state& state) {
  for (const std::string& key : p_.index.keys()) {
    if (!p_.tombstones.has_file(key)) continue;
    const std::uint64_t seq = p_.index.find(key)->held.seq;
    state.notes.push_back("dropped result " + std::to_string(seq) + ": it was already delivered (its tombstone is in done/)");
    p_.index.drop(seq);
  }
  const std::int64_t expired_before_ms = p_.tombstones.load_expiry();
  std::vector<queue_tombstones::keyed> missing;
  for (const auto& [key, t] : state.retired) {
    if (p_.index.holds(key) || t.done_unix_ms <= expired_before_ms) continue;
    if (p_.tombstones.lacks_file(key)) missing.emplace_back(key, t);
  }
  p_.tombstones.refile_from_journal(missing, state.notes);
}

// Texts no held result keeps in a file: left by a crash between a text and its entry, or by
// drops above.
void queue_recovery::settle_texts(std::vector<std::string>& notes) {
  const std::vector<std::string> in_files = p_.index.file_texts();
  const std::unordered_set<std::string> used(in_files.begin(), in_files.end());
  for (const std::string& name : names_after_temps(p_.texts_fd, "texts", notes)) {
    const auto sha = hash_stem(name, ".txt");
    if (!sha) {
      notes.push_back("left alone texts/" + name + ": not a file the queue writes");
      continue;
    }
    if (used.contains(*sha)) continue;
    std::string err = remove_name(p_.texts_fd, name, "texts/" + name);
    notes.push_back(err.empty() ? "dropped texts/" + name + ": no record uses it" : std::move(err));
  }
}

}  // namespace handoff
