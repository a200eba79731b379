// A delivered batch (see batch.hpp): allocate, project, save what was cut, render.
//
// The rendered text is exactly what the allocator budgeted for: each admitted section is its
// wrapper (the separator before it, its header block) plus a projection of at most its byte
// limit, and the deferred notice is never longer than the worst case reserved for it. So the
// text is within report.batch_cap_bytes by construction; build_batch still checks it, because
// a parent flooded past its cap is the failure this whole contract exists to prevent.
#include "engine/text/batch.hpp"

#include <algorithm>
#include <stdexcept>

#include "engine/store/artifact_store.hpp"
#include "engine/text/projection_notice.hpp"
#include "engine/fs/sha256.hpp"
#include "engine/text/text_shape.hpp"

namespace handoff {
namespace {

// Between two sections, as OpenPI's subagent_wait joins them. Counted in the wrapper of the
// section that follows it.
constexpr std::string_view section_separator = "\n\n---\n\n";

// The reason a cut result names when the daemon runs without a store.
constexpr std::string_view no_store_reason = "no artifact store configured";

// A client string made safe for a header line: every character that could start a new line
// for a reader (ASCII controls, NEL U+0085, LINE/PARAGRAPH SEPARATOR U+2028/U+2029) becomes
// one space, so a title cannot fake a header, an error line or a separator.
std::string one_line(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f) {
      out.push_back(' ');
    } else if (c == 0xc2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0x85) {
      out.push_back(' ');
      i += 1;
    } else if (c == 0xe2 && i + 2 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0x80 &&
               (static_cast<unsigned char>(s[i + 2]) == 0xa8 ||
                static_cast<unsigned char>(s[i + 2]) == 0xa9)) {
      out.push_back(' ');
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

// The paragraph closing a batch that held `count` (>= 1) results back, separator included.
std::string deferred_notice(std::size_t count) {
  std::string out(section_separator);
  out += '[';
  out += std::to_string(count);
  out += count == 1 ? " more subagent result is waiting; it will"
                    : " more subagent results are waiting; they will";
  out += " be delivered in the next batch.]";
  return out;
}

// The longest notice this batch could need: at most n - 1 results are deferred (the first is
// always delivered), and the plural form with the most digits is the longest.
std::size_t worst_notice_bytes(std::size_t inputs) {
  if (inputs < 2) return 0;
  return std::max(deferred_notice(1).size(), deferred_notice(inputs - 1).size());
}

// The full text of a cut result goes to the store; without one the footer says so honestly.
artifact_ref keep_full_text(const batch_input& in, artifact_store* store, when_synced sync) {
  if (store != nullptr)
    return store->save(in.final_text, in.sha256 ? *in.sha256 : sha256_hex(in.final_text), in.file, sync);
  artifact_ref ref;
  ref.saved = false;
  ref.sha256 = in.sha256 ? *in.sha256 : sha256_hex(in.final_text);
  ref.error = std::string(no_store_reason);
  return ref;
}

bool may_be_cut(text_shape shape, const surface_caps& caps) {
  return shape.bytes > caps.floor_bytes || shape.lines > caps.max_lines;
}

// Where the input's artifact would be, for sizing its footer (a hash of the same length when the
// input's is not known yet).
std::string artifact_path(const batch_input& in, const artifact_store* store) {
  if (store == nullptr) return {};
  return store->path_of(in.sha256 ? *in.sha256 : sha256_placeholder()).string();
}

void validate(const batch_options& options) {
  if (options.caps.floor_bytes < min_projection_bytes ||
      options.caps.max_lines < min_projection_lines)
    throw std::invalid_argument(
        "batch: the floor and line cap must allow a projection (>= " +
        std::to_string(min_projection_bytes) + " B, >= " + std::to_string(min_projection_lines) +
        " lines)");
}

}  // namespace

std::size_t least_cut_bytes(text_shape shape, std::string_view artifact_path, std::string_view reader,
                            const reader_profile& profile) {
  artifact_ref saved;
  saved.profile = &profile;
  saved.saved = !artifact_path.empty();
  saved.path = std::string(artifact_path);
  saved.sha256 = sha256_placeholder();
  saved.reader = std::string(reader);
  artifact_ref failed;
  failed.sha256 = saved.sha256;
  failed.profile = &profile;
  failed.error = std::string(max_notice_reason_bytes, 'x');
  return std::max(min_cut_bytes(shape, saved), min_cut_bytes(shape, failed));
}

surface_caps framed_caps(surface_caps caps, const reader_profile& reader) noexcept {
  const std::size_t frame_most = reader.frame_bytes + reader.line_indent_bytes * caps.max_lines;
  caps.per_result_bytes = caps.per_result_bytes > frame_most + caps.floor_bytes ? caps.per_result_bytes - frame_most
                                                                                : caps.floor_bytes;
  return caps;
}

std::string section_header(const batch_input& in) {
  std::string out = "Subagent ";
  out += one_line(in.child_id);
  if (!in.title.empty()) {
    out += " \"";
    out += one_line(in.title);
    out += '"';
  }
  switch (in.status) {
    case result_status::done: out += " finished."; break;
    case result_status::error: out += " failed."; break;
    case result_status::cancelled: out += " was cancelled."; break;
  }
  // The error is shown whatever the status: a client that sent one wants it read. It may span
  // lines (a stack trace); it sits below the header like the body does, which is no more
  // trusted than it.
  if (!in.error.empty()) {
    out += "\nError: ";
    out += in.error;
  }
  out += "\n\n";
  return out;
}

batch build_batch(std::span<const batch_input> inputs, const batch_options& options,
                  artifact_store* store) {
  validate(options);
  // A harness that frames each result (reader_profile::frame_bytes, line_indent_bytes): the
  // frame and the indent of every line a projection may have come out of its per-result cap and
  // count as wrapper in the batch, so what the model reads stays within both caps.
  const reader_profile& reader = *options.profile;
  const surface_caps caps = framed_caps(options.caps, reader);
  std::vector<std::string> headers;
  std::vector<budget_item> items;
  std::vector<text_shape> shapes;
  headers.reserve(inputs.size());
  items.reserve(inputs.size());
  shapes.reserve(inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    headers.push_back(section_header(inputs[i]));
    const text_shape shape = inputs[i].companion && inputs[i].shape ? *inputs[i].shape
                                                                    : measure(inputs[i].final_text, inputs[i].shape);
    shapes.push_back(shape);
    // Admission keeps a prefix, so every input but the first is preceded by a separator.
    const std::size_t separator = i == 0 ? 0 : section_separator.size();
    const std::size_t frame = reader.frame_bytes + reader.line_indent_bytes * std::min(shape.lines, caps.max_lines);
    items.push_back({shape.bytes, shape.lines, headers.back().size() + separator + frame,
                     may_be_cut(shape, caps) ? least_cut_bytes(shape, artifact_path(inputs[i], store), options.reader, *options.profile)
                                                     : 0});
  }
  const allocation alloc = allocate(caps, items, options.usage,
                                    worst_notice_bytes(inputs.size()), options.policy);

  batch out;
  out.budget = alloc.report;
  for (const std::size_t i : alloc.deferred)
    if (!inputs[i].companion) out.deferred.push_back(i);
  out.sections.reserve(alloc.admitted.size());
  for (std::size_t k = 0; k < alloc.admitted.size(); ++k) {
    const std::size_t i = alloc.admitted[k];
    const batch_input& in = inputs[i];
    if (in.companion) continue;  // another wait projects it, with this same allocation
    const projection_limits limits{alloc.byte_limits[k], alloc.max_lines, options.head_share};
    batch_section section;
    section.child_id = in.child_id;
    section.title = in.title;
    section.status = in.status;
    section.error = in.error;
    section.input_index = i;
    if (fits(shapes[i], limits)) {
      section.proj = project(in.final_text, limits, artifact_ref{}, shapes[i]);
    } else {
      section.artifact = keep_full_text(in, store, options.artifacts);
      section.artifact->reader = options.reader;
      section.artifact->profile = options.profile;
      section.proj = project(in.final_text, limits, *section.artifact, shapes[i]);
    }
    if (!out.sections.empty()) out.text += section_separator;
    out.text += headers[i];
    out.text += section.proj.text;
    out.sections.push_back(std::move(section));
  }
  if (!out.deferred.empty()) out.text += deferred_notice(out.deferred.size());

  if (out.text.size() > out.budget.batch_cap_bytes)
    throw std::logic_error("batch: rendered " + std::to_string(out.text.size()) +
                           " B over the batch cap of " +
                           std::to_string(out.budget.batch_cap_bytes) + " B");
  return out;
}

}  // namespace handoff
