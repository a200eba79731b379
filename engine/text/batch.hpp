// A delivered batch: allocate the budget, project every admitted result (saving the full text
// of the cut ones), and render the one message the parent model reads.
//
// Rendering follows OpenPI: each section is `Subagent ID "TITLE" finished.` (or `failed.` and
// `Error: ...`, or `was cancelled.`), a blank line, then the projection; sections are joined
// with "\n\n---\n\n"; a deferred notice closes the batch when results were held back. The whole
// rendered text is within the batch cap.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/text/budget.hpp"
#include "engine/text/projection.hpp"
#include "engine/text/result_status.hpp"
#include "engine/fs/atomic_file.hpp"
#include "engine/fs/text_file.hpp"

namespace handoff {

class artifact_store;

// One finished child as the batch builder needs it. `final_text` must stay valid during build.
struct batch_input {
  std::string child_id;
  std::string title;           // may be empty
  result_status status = result_status::done;
  std::string error;           // may be empty
  std::string_view final_text;
  std::optional<std::string> sha256;  // the text's hash, when already known
  // The text as a file (the queue's), which a cut result's artifact hard-links instead of
  // copying (artifact_store::save); nullopt: the artifact is written from final_text.
  std::optional<text_file> file;
  // The text's shape when already known (the queue measured it when it took the text): a cut
  // then reads only the pages near the cuts instead of counting every line again. One that
  // cannot be the text's is not used (measure(text, known) in text_shape.hpp).
  std::optional<text_shape> shape;
  // A companion shares the batch's budget and is neither projected, saved nor rendered: a
  // sibling result another wait answers (subagent/wait's batchWith), counted so that every
  // sibling's wait allocates the same budget over the same results. `shape` must be set; the
  // text is not read.
  bool companion = false;
};

struct batch_section {
  std::string child_id;
  std::string title;
  result_status status = result_status::done;
  std::string error;
  projection proj;                      // proj.text is what the section shows
  std::optional<artifact_ref> artifact; // set when proj.truncated
  std::size_t input_index = 0;          // index into the inputs
};

struct batch {
  std::vector<batch_section> sections;  // admitted, completion order; companions never
  std::vector<std::size_t> deferred;    // input indices held for the next flush (no companions)
  budget_report budget;
  std::string text;                     // the rendered message; bytes <= budget.batch_cap_bytes
};

struct batch_options {
  surface_caps caps = surface_caps::wait();
  std::optional<context_usage> usage;
  double head_share = 0.75;
  dynamic_policy policy{};
  std::string reader = "handoff";  // the CLI the footers name (artifact_ref::reader)
  const reader_profile* profile = &pi_reader;  // the tools the footers' calls are for
  // When the cut results' artifacts are made durable: before build_batch returns, or by the
  // caller (artifact_store::sync) before anything relies on them surviving a power loss
  // (subagent/wait: after its answer, before its results leave the queue).
  when_synced artifacts = when_synced::before_return;
};

// The caps a batch for `reader` holds each projection to: the per-result cap less the most the
// harness adds around one result (its frame, and its indent on each of max_lines lines), never
// below the floor, and within the harness's own cut on one result (reader_profile::result_bytes,
// cline's), the floor lowered to it when it is less. Pi adds nothing: `caps` as they are.
surface_caps framed_caps(surface_caps caps, const reader_profile& reader) noexcept;

// The header block before a section's projection: the `Subagent ...` line (id and title with
// line breaks turned into spaces), an `Error: ...` line when there is an error, and the blank
// line. The "\n\n---\n\n" separator before every section but the first is not part of it.
std::string section_header(const batch_input& in);

// The least a cut of a text of shape `shape` can be when its artifact goes to `artifact_path`
// (empty: no store) and its footer's commands run `reader`: its marker and footer, whether the
// save succeeds or fails (with the longest reason a footer prints), plus a minimal head and
// tail. build_batch raises its floor to this (budget_item::min_cut_bytes); a per-result cap
// below it could not cut such a text at all.
std::size_t least_cut_bytes(text_shape shape, std::string_view artifact_path, std::string_view reader,
                            const reader_profile& profile = pi_reader);

// Builds the batch. `store` may be null (then cut results are not saved, with the reason "no
// artifact store configured"). Throws std::invalid_argument when the caps cannot hold a
// projection (floor < min_projection_bytes or max_lines < min_projection_lines) or the
// allocator refuses them, and std::logic_error if the text ever exceeded the cap (a bug).
batch build_batch(std::span<const batch_input> inputs, const batch_options& options,
                  artifact_store* store);

}  // namespace handoff
