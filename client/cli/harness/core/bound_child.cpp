#include "cli/harness/core/bound_child.hpp"

#include <exception>

#include "cli/harness/core/daemon_link.hpp"
#include "cli/harness/core/local_bound.hpp"
#include "engine/text/batch.hpp"
#include "engine/text/projection.hpp"

namespace handoff::cli::hook_core {

bool fits_alone(const std::string& text, const reader_profile& reader) {
  const surface_caps caps = framed_caps(surface_caps::wait(), reader);
  return fits(text, projection_limits{caps.per_result_bytes, caps.max_lines});
}

bound_outcome bound_child(const finished_child& c, const hook_settings& settings) {
  bound_outcome out;
  rpc::wait_result waited;
  try {
    client::connection conn = connect(settings, true);
    for (const sibling& s : c.siblings) conn.started({c.parent, s.id, s.title});
    rpc::completed_params done;
    done.parent_id = c.parent;
    done.child_id = c.child;
    done.title = c.title;
    done.status = "done";
    done.final_text = c.answer;
    conn.completed(done);

    rpc::wait_params wait;
    wait.parent_id = c.parent;
    wait.child_ids = {c.child};
    wait.reader = std::string(c.reader->name);
    wait.usage = c.usage;
    if (!c.siblings.empty()) {
      wait.batch_with.push_back(c.child);
      for (const sibling& s : c.siblings) wait.batch_with.push_back(s.id);
      wait.timeout_ms = settings.siblings_wait.count();
    } else {
      wait.timeout_ms = settings.connect_budget.count();
    }
    waited = conn.wait(wait);
  } catch (const std::exception& e) {
    out.what = bound_outcome::kind::unreachable;
    out.text = e.what();
    return out;
  }
  for (rpc::section_dto& section : waited.batch.sections) {
    if (section.child_id != c.child) continue;
    out.what = bound_outcome::kind::section;
    out.text = section.text;
    out.section = std::move(section);
    return out;
  }
  if (waited.batch.deferred > 0) {
    out.what = bound_outcome::kind::held_back;
    out.text = held_back_note(*c.reader, c.parent, c.child, c.answer.size());
    return out;
  }
  out.what = bound_outcome::kind::not_bounded;
  out.text = "handoffd answered no section for it";
  return out;
}

std::string why_not_bounded(const bound_outcome& outcome) {
  if (outcome.what == bound_outcome::kind::unreachable) return "handoff's daemon was not reached (" + one_line(outcome.text) + ")";
  return "handoffd did not bound this result (" + one_line(outcome.text) + ")";
}

}  // namespace handoff::cli::hook_core
