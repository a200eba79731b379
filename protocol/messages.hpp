// Typed params and results of every method in docs/protocol.md §6-7, with their JSON forms.
// Wire names are camelCase. Decoding untrusted params throws rpc_error{invalid_params} naming
// the field ("childIds[3]: expected a string"), and enforces the size caps in `wire_limits`.
// Unknown members are ignored (newer peers may add some); an optional member may be absent or
// null. docs/protocol.md is the reference for every field.
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
  std::optional<std::int64_t> tokens;  // tokens: in context, >= 0 (floored); null after compaction
  std::int64_t context_window = 0;     // contextWindow: model window, tokens; <= 0: unknown
  std::optional<double> percent;       // percent: tokens / window * 100, or null; informational
};

// Where a cut result's full text is.
struct artifact_dto {
  bool saved = false;  // saved: the full text is in the store at `path`
  std::string path;    // path: absolute path of the artifact file, when saved (else absent)
  std::string sha256;  // sha256: hash of the full text, 64 lowercase hex (the file's name)
  std::string reason;  // reason: why it was not saved, when !saved (else absent)
};

// One result in a batch.
struct section_dto {
  std::string child_id;        // childId
  std::string title;           // title: as given by started/completed, may be ""
  std::string status;          // status: "done" | "error" | "cancelled"
  std::string error;           // error: the child's error text; "" = none (omitted on the wire)
  std::string text;            // text: the projection, UTF-8, within this result's share
  bool truncated = false;      // truncated: text is head + marker + tail + footer, not all of it
  std::size_t total_bytes = 0;   // totalBytes: the full text's size, UTF-8 bytes
  std::size_t total_lines = 0;   // totalLines: the full text's lines (split("\n"))
  std::optional<std::size_t> omitted_offset;  // omitted.offset: first omitted line, 1-based
  std::optional<std::size_t> omitted_limit;   // omitted.limit: omitted lines (both: when cut)
  std::optional<artifact_dto> artifact;       // artifact: when truncated (else null)
};

// How a batch's budget was decided.
struct budget_dto {
  std::string mode;            // mode: "static" | "dynamic"
  std::string basis;           // basis: plain words, e.g. "static: no usage"
  std::size_t batch_cap_bytes = 0;     // batchCapBytes: the cap the rendered batch kept to, bytes
  std::size_t static_batch_bytes = 0;  // staticBatchBytes: the surface's static batch cap, bytes
  std::size_t per_result_bytes = 0;    // perResultBytes: the surface's per-result cap, bytes
  std::size_t floor_bytes = 0;         // floorBytes: no admitted result got less, bytes
  std::size_t max_lines = 0;           // maxLines: per-result line cap
  std::optional<usage_dto> usage;      // usage: what a dynamic budget was based on (else null)
  std::optional<std::size_t> headroom_bytes;  // headroomBytes: share of free context, bytes|null
};

// A projected batch: subagent/wait's result and parent/deliver's params share it.
struct batch_dto {
  std::vector<section_dto> sections;  // sections: one per delivered result, completion order
  std::string text;            // text: the rendered message the model reads, <= batchCapBytes
  std::size_t deferred = 0;    // deferred: results held for a later flush
  budget_dto budget;           // budget
};

// ---- methods (client -> daemon) -------------------------------------------------------------

struct initialize_params {
  std::string protocol_version;          // protocolVersion: optional on the wire; "1" when absent
  std::string client_name;               // clientName: optional, for logs, <= max_title_bytes
  std::optional<std::string> parent_id;  // parentId: makes this connection the parent's endpoint
};
struct initialize_result {
  std::string protocol_version;          // protocolVersion: the daemon's, "1"
  std::string server_version;            // serverVersion: handoffd's version
  std::optional<std::string> parent_id;  // parentId: echoed when registered as endpoint (else null)
  std::string artifact_dir;              // artifactDir: absolute path of the artifact store
  json limits;                           // limits: the effective caps (frame, fields, surfaces)
};

struct started_params {
  std::string parent_id;  // parentId
  std::string child_id;   // childId
  std::string title;      // title: optional, "" when absent
};
struct started_result {
  std::string state;  // state: "running", or the state it already had
};

struct progress_params {  // a notification
  std::string parent_id;  // parentId
  std::string child_id;   // childId
  std::string text;       // text: recent activity, <= max_progress_bytes
};

struct completed_params {
  std::string parent_id;        // parentId
  std::string child_id;         // childId
  std::string title;            // title: optional, "" when absent
  std::string status;           // status: "done" | "error" | "cancelled" (required)
  std::string error;            // error: optional, "" when absent
  std::string final_text;       // finalText: the exact final answer, UTF-8
};
struct completed_result {
  bool duplicate = false;       // duplicate: an identical completion was already held
  std::string sha256;           // sha256: of finalText, 64 lowercase hex
  std::size_t bytes = 0;        // bytes: finalText's UTF-8 bytes
  std::size_t lines = 0;        // lines: finalText's lines (split("\n"))
};

struct check_params {
  std::string parent_id;  // parentId
  std::string child_id;   // childId
};
struct check_result {
  std::string child_id;         // childId
  std::string title;            // title
  std::string state;            // state: "running" | "completed" | "delivering" | "delivered" | "cancelled" | "forgotten"
  std::string status;           // status: once completed "done" | "error" | "cancelled", else null
  std::string error;            // error: omitted when empty
  std::string preview;          // preview: <= 2 KiB / 20 lines: progress tail or final text's tail
  bool preview_truncated = false;  // previewTruncated: the preview is a tail of something longer
  std::optional<std::size_t> bytes, lines;  // bytes, lines: final text size once completed|null
};

struct wait_params {
  std::string parent_id;                   // parentId
  std::vector<std::string> child_ids;      // childIds: 1..64, unique
  std::optional<std::int64_t> timeout_ms;  // timeoutMs: 0..24 h; none: wait until all complete
  std::optional<usage_dto> usage;          // usage: the parent's usage, for the dynamic budget
  // batchWith: 0..64 unique siblings of childIds that share this wait's budget: the wait also
  // waits for them to stop running, then allocates one budget over childIds and batchWith (in
  // completion order) and answers childIds only; each sibling's own wait, given the same set
  // and usage, gets the rest of the same allocation. Empty: none.
  std::vector<std::string> batch_with = {};
  // reader: whose tools the footers' calls are for, "pi" (default) or "claude-code"
  // (engine/text/reader_profile.hpp).
  std::string reader = "pi";
};
struct wait_result {
  batch_dto batch;                      // flattened on the wire: sections, text, deferred, budget
  bool timed_out = false;               // timedOut: returned at timeoutMs with children pending
  std::vector<std::string> pending;     // pending: listed children not completed yet
  std::vector<std::string> already_delivered;  // alreadyDelivered: delivered before this wait (not repeated)
  std::vector<std::string> cancelled;   // cancelled: listed children the parent cancelled
  std::vector<std::string> forgotten = {};  // forgotten: delivered, then forgotten (--forget-after-ms)
};

struct cancel_params {
  std::string parent_id;                // parentId
  std::vector<std::string> child_ids;   // childIds: 1..64, unique
};
struct cancel_result {
  std::vector<std::string> cancelled;   // cancelled: ids that were known
  std::size_t consumed = 0;             // consumed: completed results dropped with them
};

// $/cancelRequest (a notification, as in LSP): the id of a request of the same connection.
struct cancel_request_params {
  nlohmann::json id;  // id: a string or an integer, as the request had it
};

struct parent_state_params {  // a notification
  std::string parent_id;  // parentId
  std::string state;      // state: "busy" | "idle"
};

struct artifact_read_params {
  std::string sha256;                  // sha256: 64 lowercase hex
  std::size_t offset = 1;              // offset: first line, 1-based; default 1
  std::optional<std::size_t> limit;    // limit: max lines, >= 1; default: to the end (still capped)
};
struct artifact_read_result {
  std::string path;              // path: the artifact's absolute path
  std::string text;              // text: the lines, joined with "\n"
  std::size_t first_line = 0;    // firstLine: 1-based number of the first line in text
  std::size_t last_line = 0;     // lastLine: 1-based number of the last line in text
  std::size_t total_lines = 0;   // totalLines: lines in the artifact
  bool cut = false;              // cut: stopped by the 2000-line / 50 KiB page cap before limit
  std::optional<std::size_t> next_offset;  // nextOffset: where to continue, or null at the end
};

// daemon/status and daemon/gc: protocol/daemon_messages.hpp.

// ---- methods (daemon -> client) -------------------------------------------------------------

struct usage_request_params {
  std::string parent_id;  // parentId: whose usage is asked
};
// context/usage result: usage_dto or null.

struct deliver_params {
  std::string parent_id;    // parentId
  std::string delivery_id;  // deliveryId: stable across resends of the same batch
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
// The same checks, moving finalText out of `params` instead of copying it (the daemon's
// decoder: a final text is up to 64 MiB).
completed_params take_completed(json&& params, const wire_limits& lim);
json encode(const completed_result& v);
check_params decode_check(const json& params, const wire_limits& lim);
json encode(const check_result& v);
wait_params decode_wait(const json& params, const wire_limits& lim);
json encode(const wait_result& v);
cancel_params decode_cancel(const json& params, const wire_limits& lim);
json encode(const cancel_result& v);
parent_state_params decode_parent_state(const json& params, const wire_limits& lim);
cancel_request_params decode_cancel_request(const json& params, const wire_limits& lim);
artifact_read_params decode_artifact_read(const json& params, const wire_limits& lim);
json encode(const artifact_read_result& v);
json encode(const usage_request_params& v);
json encode(const deliver_params& v);

// Client-side decoders of results (the C++ client library uses them; they throw rpc_error too).
initialize_result decode_initialize_result(const json& j);
started_result decode_started_result(const json& j);
completed_result decode_completed_result(const json& j);
check_result decode_check_result(const json& j);
wait_result decode_wait_result(const json& j);
cancel_result decode_cancel_result(const json& j);
artifact_read_result decode_artifact_read_result(const json& j);
usage_request_params decode_usage_request(const json& params);
deliver_params decode_deliver(const json& params);
// Encoders of params, for clients.
json encode(const initialize_params& v);
json encode(const started_params& v);
json encode(const progress_params& v);
json encode(const completed_params& v);
// Every member but finalText, for a writer that appends the text itself (the C++ client: a
// final text of up to 64 MiB is not copied into a json on its way to the socket).
json encode_without_final_text(const completed_params& v);
json encode(const check_params& v);
json encode(const wait_params& v);
json encode(const cancel_params& v);
json encode(const parent_state_params& v);
json encode(const artifact_read_params& v);

}  // namespace handoff::rpc
