// Typed params and results of every method in design.md section 5, with their JSON forms.
// Wire names are camelCase. Decoding untrusted params throws rpc_error{invalid_params} naming
// the field ("childIds[3]: expected a string"), and enforces the size caps in `wire_limits`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace handoff::rpc {

using json = nlohmann::json;

inline constexpr std::string_view protocol_version = "1";

// Caps on client-supplied fields; decoding rejects anything larger (defaults shown).
struct wire_limits {
  std::size_t max_id_bytes = 256;          // parentId, childId: 1..256 bytes, no control chars
  std::size_t max_title_bytes = 1024;      // title
  std::size_t max_error_bytes = 8 * 1024;  // error text
  std::size_t max_progress_bytes = 64 * 1024;        // one progress text
  std::size_t max_final_text_bytes = 64 * 1024 * 1024;  // finalText (frame cap still applies)
  std::size_t max_child_ids = 64;          // childIds per wait/cancel
  std::int64_t max_timeout_ms = 24LL * 3600 * 1000;  // timeoutMs: 0..24 h
};

// ---- shared shapes ----------------------------------------------------------------------

// Pi's ContextUsage: {tokens: number|null, contextWindow: number, percent: number|null}.
struct usage_dto {
  std::optional<std::int64_t> tokens;  // null after compaction
  std::int64_t context_window = 0;     // tokens; > 0 to be usable
  std::optional<double> percent;
};

// Where a cut result's full text is.
struct artifact_dto {
  bool saved = false;
  std::string path;    // absolute path when saved
  std::string sha256;  // hash of the full text
  std::string reason;  // why not saved, when !saved
};

// One result in a batch.
struct section_dto {
  std::string child_id;
  std::string title;
  std::string status;          // "done" | "error" | "cancelled"
  std::string error;           // empty when none (omitted on the wire)
  std::string text;            // the projection
  bool truncated = false;
  std::size_t total_bytes = 0;
  std::size_t total_lines = 0;
  std::optional<std::size_t> omitted_offset;  // first omitted line (1-based), when truncated
  std::optional<std::size_t> omitted_limit;   // omitted line count, when truncated
  std::optional<artifact_dto> artifact;       // when truncated
};

// How a batch's budget was decided.
struct budget_dto {
  std::string mode;            // "static" | "dynamic"
  std::string basis;           // plain words
  std::size_t batch_cap_bytes = 0;
  std::size_t static_batch_bytes = 0;
  std::size_t per_result_bytes = 0;
  std::size_t floor_bytes = 0;
  std::size_t max_lines = 0;
  std::optional<usage_dto> usage;
  std::optional<std::size_t> headroom_bytes;
};

// A projected batch: subagent/wait's result and parent/deliver's params share it.
struct batch_dto {
  std::vector<section_dto> sections;
  std::string text;            // the rendered message the parent model reads
  std::size_t deferred = 0;    // results held for a later flush
  budget_dto budget;
};

// ---- methods (client -> daemon) -------------------------------------------------------------

struct initialize_params {
  std::string protocol_version;          // optional on the wire; "1" when absent
  std::string client_name;               // optional, for logs
  std::optional<std::string> parent_id;  // makes this connection the parent's endpoint
};
struct initialize_result {
  std::string protocol_version;
  std::string server_version;
  std::optional<std::string> parent_id;  // echoed when registered as endpoint
  std::string artifact_dir;
  json limits;                           // the effective caps (frame, fields, surfaces)
};

struct started_params {
  std::string parent_id, child_id, title;
};
struct started_result {
  std::string state;  // "running", or the state it already had
};

struct progress_params {  // a notification
  std::string parent_id, child_id, text;
};

struct completed_params {
  std::string parent_id, child_id, title;
  std::string status;           // "done" | "error" | "cancelled"
  std::string error;
  std::string final_text;
};
struct completed_result {
  bool duplicate = false;       // an identical completion was already held
  std::string sha256;
  std::size_t bytes = 0, lines = 0;
};

struct check_params {
  std::string parent_id, child_id;
};
struct check_result {
  std::string child_id, title;
  std::string state;            // "running" | "completed" | "delivered" | "cancelled"
  std::string status;           // when completed: "done" | "error" | "cancelled"
  std::string error;
  std::string preview;          // <= 2 KiB / 20 lines: progress tail, or the final text's tail
  bool preview_truncated = false;
  std::optional<std::size_t> bytes, lines;  // final text size, when completed
};

struct wait_params {
  std::string parent_id;
  std::vector<std::string> child_ids;   // 1..64, unique
  std::optional<std::int64_t> timeout_ms;  // none: wait until all complete
  std::optional<usage_dto> usage;       // the parent's usage, for the dynamic budget
};
struct wait_result {
  batch_dto batch;
  bool timed_out = false;
  std::vector<std::string> pending;     // listed children not completed yet
};

struct cancel_params {
  std::string parent_id;
  std::vector<std::string> child_ids;
};
struct cancel_result {
  std::vector<std::string> cancelled;   // ids that were known
  std::size_t consumed = 0;             // completed results dropped with them
};

struct parent_state_params {  // a notification
  std::string parent_id;
  std::string state;  // "busy" | "idle"
};

struct artifact_read_params {
  std::string sha256;                  // 64 lowercase hex
  std::size_t offset = 1;              // 1-based line
  std::optional<std::size_t> limit;    // lines
};
struct artifact_read_result {
  std::string path, text;
  std::size_t first_line = 0, last_line = 0, total_lines = 0;
  bool cut = false;
  std::optional<std::size_t> next_offset;
};

// daemon/status has no params; its result is free-form JSON documented in docs/protocol.md.

// ---- methods (daemon -> client) -------------------------------------------------------------

struct usage_request_params {
  std::string parent_id;
};
// context/usage result: usage_dto or null.

struct deliver_params {
  std::string parent_id;
  std::string delivery_id;
  batch_dto batch;          // flattened on the wire: sections, text, deferred, budget
};

// ---- JSON conversions ----------------------------------------------------------------------
// Decoders throw rpc_error{invalid_params}; encoders never throw.

usage_dto decode_usage(const json& j, std::string_view where = "usage");
json encode(const usage_dto& v);
json encode(const artifact_dto& v);
json encode(const section_dto& v);
json encode(const budget_dto& v);
json encode(const batch_dto& v);
section_dto decode_section(const json& j);
batch_dto decode_batch(const json& j);

initialize_params decode_initialize(const json& params, const wire_limits& lim);
json encode(const initialize_result& v);
started_params decode_started(const json& params, const wire_limits& lim);
json encode(const started_result& v);
progress_params decode_progress(const json& params, const wire_limits& lim);
completed_params decode_completed(const json& params, const wire_limits& lim);
json encode(const completed_result& v);
check_params decode_check(const json& params, const wire_limits& lim);
json encode(const check_result& v);
wait_params decode_wait(const json& params, const wire_limits& lim);
json encode(const wait_result& v);
cancel_params decode_cancel(const json& params, const wire_limits& lim);
json encode(const cancel_result& v);
parent_state_params decode_parent_state(const json& params, const wire_limits& lim);
artifact_read_params decode_artifact_read(const json& params, const wire_limits& lim);
json encode(const artifact_read_result& v);
json encode(const deliver_params& v);

// Client-side decoders of results (the C++ client library uses them; they throw rpc_error too).
initialize_result decode_initialize_result(const json& j);
completed_result decode_completed_result(const json& j);
check_result decode_check_result(const json& j);
wait_result decode_wait_result(const json& j);
cancel_result decode_cancel_result(const json& j);
artifact_read_result decode_artifact_read_result(const json& j);
deliver_params decode_deliver(const json& params);
// Encoders of params, for clients.
json encode(const initialize_params& v);
json encode(const started_params& v);
json encode(const progress_params& v);
json encode(const completed_params& v);
json encode(const check_params& v);
json encode(const wait_params& v);
json encode(const cancel_params& v);
json encode(const parent_state_params& v);
json encode(const artifact_read_params& v);

}  // namespace handoff::rpc
