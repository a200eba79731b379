#include "projection_case.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "engine/text/budget.hpp"
#include "engine/text/projection_notice.hpp"
#include "engine/fs/sha256.hpp"
#include "engine/text/text_shape.hpp"

namespace handoff::bench {
namespace {

// Pi's default artifact directory for a user named "user": the footer's path is as long as a
// real one, so the notices cost what they cost in production.
constexpr std::string_view artifact_dir = "/home/user/.pi/agent/cache/openpi/subagent-results/";

// The head's and tail's shares of the body budget, split as projection_cut.cpp splits it
// (bytes rounded down for the head, lines rounded to nearest and at least one per side).
void split_for_pi(prepared_case& c) {
  const text_shape shape = measure(c.input->text);
  const notice_size notices = footer_room_for(shape, c.limits, c.artifact).notices;
  const std::size_t body_bytes = c.limits.max_bytes - notices.bytes;
  const std::size_t body_lines = c.limits.max_lines - notices.lines;
  const auto head_bytes =
      static_cast<std::size_t>(static_cast<double>(body_bytes) * c.limits.head_share);
  const auto head_lines = std::clamp<std::size_t>(
      static_cast<std::size_t>(std::llround(static_cast<double>(body_lines) * c.limits.head_share)),
      1, body_lines - 1);
  c.pi_head = {head_bytes, head_lines};
  c.pi_tail = {body_bytes - head_bytes, body_lines - head_lines};
}

}  // namespace

prepared_case prepare(const input_case& input) {
  prepared_case c;
  c.input = &input;
  c.child.child_id = "worker-7";
  c.child.title = "Review the projection engine";
  c.child.final_text = input.text;
  c.child.sha256 = sha256_hex(input.text);
  c.options.caps = surface_caps::wait();

  // The limit build_batch computes for a lone result: its allocation under the wait caps.
  const text_shape shape = measure(input.text);
  const budget_item item{shape.bytes, shape.lines, section_header(c.child).size()};
  const allocation alloc = allocate(c.options.caps, {&item, 1}, c.options.usage, 0);
  c.limits = {alloc.byte_limits.at(0), alloc.max_lines, c.options.head_share};

  c.artifact.saved = true;
  c.artifact.sha256 = *c.child.sha256;
  c.artifact.path = std::string(artifact_dir) + c.artifact.sha256 + ".txt";
  c.expected = project(input.text, c.limits, c.artifact);
  if (c.expected.truncated) {
    split_for_pi(c);
  } else {
    // handoff returns a text that fits unchanged; Pi's pair does the same when given the
    // whole limits, so neither side cuts what it would deliver whole.
    c.pi_head = c.pi_tail = {c.limits.max_bytes, c.limits.max_lines};
  }
  return c;
}

void dump_inputs(const std::vector<prepared_case>& cases, const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  nlohmann::json manifest = nlohmann::json::array();
  for (const prepared_case& c : cases) {
    std::ofstream file(dir / c.input->file, std::ios::binary | std::ios::trunc);
    file.write(c.input->text.data(), static_cast<std::streamsize>(c.input->text.size()));
    if (!file.flush()) throw std::runtime_error("cannot write " + (dir / c.input->file).string());
    manifest.push_back({
        {"name", c.input->name},
        {"file", c.input->file},
        {"bytes", c.input->bytes},
        {"sha256", c.artifact.sha256},
        {"head", {{"maxBytes", c.pi_head.max_bytes}, {"maxLines", c.pi_head.max_lines}}},
        {"tail", {{"maxBytes", c.pi_tail.max_bytes}, {"maxLines", c.pi_tail.max_lines}}},
        {"handoff",
         {{"maxBytes", c.limits.max_bytes},
          {"maxLines", c.limits.max_lines},
          {"truncated", c.expected.truncated},
          {"headLines", c.expected.head_lines},
          {"tailLines", c.expected.tail_lines},
          {"projectedBytes", c.expected.text.size()}}},
    });
  }
  std::ofstream out(dir / "cases.json", std::ios::trunc);
  out << manifest.dump(2) << '\n';
  if (!out.flush()) throw std::runtime_error("cannot write " + (dir / "cases.json").string());
}

}  // namespace handoff::bench
