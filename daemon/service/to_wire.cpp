#include "to_wire.hpp"

namespace handoff::daemon {

rpc::batch_dto to_wire(const batch& b) {
  rpc::batch_dto out;
  out.text = b.text;
  out.deferred = b.deferred.size();
  const auto& r = b.budget;
  out.budget.mode = r.dynamic ? "dynamic" : "static";
  out.budget.basis = r.basis;
  out.budget.batch_cap_bytes = r.batch_cap_bytes;
  out.budget.static_batch_bytes = r.static_batch_bytes;
  out.budget.per_result_bytes = r.per_result_bytes;
  out.budget.floor_bytes = r.floor_bytes;
  out.budget.max_lines = r.max_lines;
  if (r.usage) out.budget.usage = rpc::usage_dto{r.usage->tokens, r.usage->context_window, r.usage->percent};
  out.budget.headroom_bytes = r.headroom_bytes;
  for (const auto& s : b.sections) {
    rpc::section_dto d;
    d.child_id = s.child_id;
    d.title = s.title;
    d.status = std::string(to_string(s.status));
    d.error = s.error;
    d.text = s.proj.text;
    d.truncated = s.proj.truncated;
    d.total_bytes = s.proj.total.bytes;
    d.total_lines = s.proj.total.lines;
    if (s.proj.truncated) {
      d.omitted_offset = s.proj.omitted_first;
      d.omitted_limit = s.proj.omitted_count;
    }
    if (s.artifact) d.artifact = rpc::artifact_dto{s.artifact->saved, s.artifact->path, s.artifact->sha256, s.artifact->error};
    out.sections.push_back(std::move(d));
  }
  return out;
}

}  // namespace handoff::daemon
