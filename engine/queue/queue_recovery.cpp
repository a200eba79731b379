// pending_queue::recover(): rebuilds the queue's memory by replaying the journal, cuts the tail
// a crash tore, and removes what nothing uses any more. Every removal is reported in `problems`.
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
#include "engine/queue/journal_entry.hpp"
#include "engine/queue/queue_core.hpp"
#include "engine/queue/queue_disk.hpp"
#include "engine/queue/queue_files.hpp"
#include "engine/fs/sha256.hpp"

namespace handoff {

// What the replay gathers beyond the index, judged once the whole journal is read.
struct queue_core::replay_state {
  std::vector<std::string>& notes;
  std::uint64_t& max_seq;
  std::unordered_map<std::string, tombstone> retired;                // key -> as the journal says
  std::unordered_map<std::string, std::optional<text_shape>> files;  // sha256 -> checked text file
  std::unordered_map<std::uint64_t, std::string> textless;           // seq -> its put, text file missing
};

pending_queue::recovered queue_core::recover(std::vector<std::string>* problems) {
  std::lock_guard lock(mutex_);
  if (recovered_) throw std::logic_error("pending_queue::recover() called twice");
  std::vector<std::string> notes;
  std::uint64_t max_seq = 0;
  try {
    names_after_temps(dir_fd_.get(), dir_.filename().string(), notes);  // the expiry time's temp file
    tombstones_.count_files(notes);
    replay(notes, max_seq);
    journal_.start_appending();
    migrate_legacy(notes, max_seq);
    index_.prune_deliveries();  // deliveries go on with the results still held
    settle_texts(notes);
  } catch (const fs_error& e) {
    throw queue_error(std::string("cannot recover the queue in ") + dir_.string() + ": " + e.what());
  }
  for (const std::string& name : journal_.strangers())
    notes.push_back("left alone journal/" + name + ": not a file the queue writes");

  next_seq_ = max_seq + 1;
  recovered_ = true;
  journal_bytes_ = journal_.total_bytes();
  publish_stats();
  pending_queue::recovered out{index_.results_by_seq(), index_.deliveries_in_order()};
  if (problems != nullptr) problems->insert(problems->end(), notes.begin(), notes.end());
  return out;
}

void queue_core::replay(std::vector<std::string>& notes, std::uint64_t& max_seq) {
  const std::vector<std::uint64_t> segments = journal_.segments();
  replay_state state{notes, max_seq, {}, {}, {}};
  for (std::size_t i = 0; i < segments.size(); ++i) replay_segment(segments[i], i + 1 == segments.size(), state);
  for (const auto& [seq, shown] : state.textless) {
    const queue_index::entry* held = index_.find(seq);
    if (held == nullptr) continue;  // retired later on: nothing is lost
    notes.push_back("dropped the completion " + shown + ": its text texts/" + held->held.sha256 +
                    ".txt is missing or does not match its hash");
    index_.drop(seq);
  }
  settle_tombstones(state);
}

// One segment, entry by entry; the first entry that does not check out ends it, and the segment
// is cut there. Zeros where an entry would start, to the end of the file, are the space
// journal::zero_ahead() wrote: the entries end there, nothing is cut. A put whose text does not
// match its hash with only zeros after it is the tail of a group a crash interrupted (its
// header reached the disk, its text did not): cut too. Elsewhere such a put is dropped alone.
void queue_core::replay_segment(std::uint64_t segment, bool last, replay_state& state) {
  const std::string shown = "journal/" + segment_name(segment);
  const std::size_t size = journal_.segment_size(segment);
  const mapped_file whole(journal_.segment_fd(segment), 0, size);
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
    journal_.cut(segment, at);
  };
  std::size_t at = 0;
  while (at < bytes.size()) {
    std::string why;
    const auto e = decode_entry(bytes, at, why);
    if (!e) {
      if (zeros_from(at)) return journal_.end_at(segment, at);
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

bool queue_core::replay_entry(const decoded_entry& e, std::string_view bytes, std::uint64_t segment,
                                 const std::string& shown, replay_state& state) {
  std::string why;
  switch (e.kind) {
    case entry_kind::put:
      if (auto p = decode_put(e.meta, why)) return replay_put(std::move(*p), e, bytes, segment, shown, state);
      break;
    case entry_kind::retire:
      if (auto r = decode_retire(e.meta, why)) {
        state.max_seq = std::max(state.max_seq, r->t.seq);
        if (const queue_index::entry* held = index_.find(r->key); held != nullptr && held->held.seq == r->t.seq)
          index_.drop(r->t.seq);
        state.retired[r->key] = r->t;
        return true;
      }
      break;
    case entry_kind::delivery:
      if (auto d = decode_delivery(e.meta, why)) {
        for (const std::uint64_t seq : d->seqs) state.max_seq = std::max(state.max_seq, seq);
        index_.add_delivery(std::move(*d), segment);
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
        if (const auto sent_in = index_.end_delivery(*id)) index_.left(*sent_in);
        return true;
      }
      break;
  }
  state.notes.push_back("skipped the entry " + shown + ": " + why);
  return true;
}

bool queue_core::replay_put(decoded_put p, const decoded_entry& e, std::string_view bytes, std::uint64_t segment,
                               const std::string& shown, replay_state& state) {
  held_result& r = p.held;
  const std::string key = completion_key(r.info.parent_id, r.info.child_id);
  const auto drop = [&](const std::string& why) {
    state.notes.push_back("dropped the completion " + shown + ": " + why);
    return true;
  };
  state.max_seq = std::max(state.max_seq, r.seq);
  if (const std::string* taken = index_.key_of(r.seq); taken != nullptr && *taken != key)
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
  index_.hold(key, queue_index::entry{std::move(r), where});  // a copy moved forward replaces the older one
  return true;
}

std::optional<text_shape> queue_core::check_text_file(const std::string& sha, std::vector<std::string>& notes) {
  const std::optional<mapped_file> text = texts_.open(sha);
  if (!text) return std::nullopt;
  if (sha256_hex(text->view()) != sha) {
    const std::string name = sha + ".txt";
    std::string err = remove_name(texts_fd_.get(), name, "texts/" + name);
    notes.push_back(err.empty() ? "dropped texts/" + name + ": its content does not match its name" : std::move(err));
    return std::nullopt;
  }
  return measure(text->view());
}

// The journal says what left; done/ is the index resends are checked against. A tombstone
// file for a result the journal still holds wins (it was delivered; the retire entry went with
// a removed segment); one the journal has and done/ lacks is written again.
void queue_core::settle_tombstones(replay_state& state) {
  for (const std::string& key : index_.keys()) {
    if (!tombstones_.has_file(key)) continue;
    const std::uint64_t seq = index_.find(key)->held.seq;
    state.notes.push_back("dropped result " + std::to_string(seq) + ": it was already delivered (its tombstone is in done/)");
    index_.drop(seq);
  }
  const std::int64_t expired_before_ms = tombstones_.load_expiry();
  std::vector<queue_tombstones::keyed> missing;
  for (const auto& [key, t] : state.retired) {
    if (index_.holds(key) || t.done_unix_ms <= expired_before_ms) continue;
    if (tombstones_.lacks_file(key)) missing.emplace_back(key, t);
  }
  tombstones_.refile_from_journal(missing, state.notes);
}

// Texts no held result keeps in a file: left by a crash between a text and its entry, or by
// drops above.
void queue_core::settle_texts(std::vector<std::string>& notes) {
  const std::vector<std::string> in_files = index_.file_texts();
  const std::unordered_set<std::string> used(in_files.begin(), in_files.end());
  for (const std::string& name : names_after_temps(texts_fd_.get(), "texts", notes)) {
    const auto sha = hash_stem(name, ".txt");
    if (!sha) {
      notes.push_back("left alone texts/" + name + ": not a file the queue writes");
      continue;
    }
    if (used.contains(*sha)) continue;
    std::string err = remove_name(texts_fd_.get(), name, "texts/" + name);
    notes.push_back(err.empty() ? "dropped texts/" + name + ": no record uses it" : std::move(err));
  }
}

}  // namespace handoff
