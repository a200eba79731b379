// Typed params and results of every method in docs/protocol.md §6-7, with their JSON forms.
// Wire names are camelCase. Decoding untrusted params throws rpc_error{invalid_params} naming
// the field ("childIds[3]: expected a string"), and enforces the size caps in `wire_limits`.
// Unknown members are ignored (newer peers may add some); an optional member may be absent or
// null. docs/protocol.md is the reference for every field.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "protocol/wire.hpp"
#include "protocol/wire_limits.hpp"

namespace handoff::rpc {

using json = nlohmann::json;

inline constexpr std::string_view protocol_version = "1";

// ---- shared shapes ----------------------------------------------------------------------

// Pi's ContextUsage: {tokens: number|null, contextWindow: number, percent: number|null}.
struct usage_dto {
  std::optional<std::int64_t> tokens;  // tokens: in context, >= 0 (floored); null after compaction
  std::int64_t context_window = 0;     // contextWindow: model window, tokens; <= 0: unknown
  std::optional<double> percent;       // percent: tokens / window * 100, or null; informational
};
template <>
struct wire::shape<usage_dto> {
  // An integer >= min from any JSON number, rounded down: Pi's token counts are integers, but
  // they are JavaScript numbers and nothing stops an adapter from sending 1234.5.
  struct whole_number {
    static constexpr std::string_view kind = "number";
    std::int64_t min;
    std::int64_t read(const field_reader& r, std::string_view key, const context&) const;
  };
  // contextWindow: any value; Pi reports windows it does not know as 0 or less, and the budget
  // treats those as "usage unknown".
  static constexpr auto fields = std::tuple{
      optional_field("tokens", &usage_dto::tokens, whole_number{0}),
      field("contextWindow", &usage_dto::context_window, whole_number{std::numeric_limits<std::int64_t>::min()}),
      optional_field("percent", &usage_dto::percent, number)};
};

// Where a cut result's full text is.
struct artifact_dto {
  bool saved = false;  // saved: the full text is in the store at `path`
  std::string path;    // path: absolute path of the artifact file, when saved (else absent)
  std::string sha256;  // sha256: hash of the full text, 64 lowercase hex (the file's name)
  std::string reason;  // reason: why it was not saved, when !saved (else absent)
};
// `path` when saved, `reason` when not: a custom rule, so read and write by hand (messages.cpp);
// the fields describe the members.
template <>
struct wire::shape<artifact_dto> {
  static void read(const field_reader& r, artifact_dto& out, const context& c);
  static void write(const artifact_dto& v, json& j);
  static constexpr auto fields = std::tuple{
      field("saved", &artifact_dto::saved, boolean),
      optional_field("path", &artifact_dto::path, any_text, when_default::omitted),
      field("sha256", &artifact_dto::sha256, any_text),
      optional_field("reason", &artifact_dto::reason, any_text, when_default::omitted)};
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
template <>
struct wire::shape<section_dto> {
  // omitted: {offset, limit} from two members, or null (messages.cpp).
  struct omitted_range {
    std::string_view name;
    void read(const field_reader& r, section_dto& out, const context& c) const;
    void write(const section_dto& v, json& j) const;
    void describe(json& fields) const;
  };
  static constexpr auto fields = std::tuple{
      field("childId", &section_dto::child_id, any_text),
      field("title", &section_dto::title, any_text),
      field("status", &section_dto::status, any_text),
      optional_field("error", &section_dto::error, any_text, when_default::omitted),
      field("text", &section_dto::text, any_text),
      field("truncated", &section_dto::truncated, boolean),
      field("totalBytes", &section_dto::total_bytes, count),
      field("totalLines", &section_dto::total_lines, count),
      omitted_range{"omitted"},
      optional_field("artifact", &section_dto::artifact, object_of<artifact_dto>)};
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
template <>
struct wire::shape<budget_dto> {
  static constexpr auto fields = std::tuple{
      field("mode", &budget_dto::mode, any_text),
      field("basis", &budget_dto::basis, any_text),
      field("batchCapBytes", &budget_dto::batch_cap_bytes, count),
      field("staticBatchBytes", &budget_dto::static_batch_bytes, count),
      field("perResultBytes", &budget_dto::per_result_bytes, count),
      field("floorBytes", &budget_dto::floor_bytes, count),
      field("maxLines", &budget_dto::max_lines, count),
      optional_field("usage", &budget_dto::usage, object_of<usage_dto>),
      optional_field("headroomBytes", &budget_dto::headroom_bytes, count)};
};

// A projected batch: subagent/wait's result and parent/deliver's params share it.
struct batch_dto {
  std::vector<section_dto> sections;  // sections: one per delivered result, completion order
  std::string text;            // text: the rendered message the model reads, <= batchCapBytes
  std::size_t deferred = 0;    // deferred: results held for a later flush
  budget_dto budget;           // budget
};
template <>
struct wire::shape<batch_dto> {
  static constexpr auto fields = std::tuple{
      field("sections", &batch_dto::sections, list_of<section_dto>),
      field("text", &batch_dto::text, any_text),
      field("deferred", &batch_dto::deferred, count),
      field("budget", &batch_dto::budget, object_of<budget_dto>)};
};

// ---- methods (client -> daemon) -------------------------------------------------------------

struct initialize_params {
  std::string protocol_version{rpc::protocol_version};  // protocolVersion: optional on the wire; "1" when absent
  std::string client_name;               // clientName: optional, for logs, <= max_title_bytes
  std::optional<std::string> parent_id;  // parentId: makes this connection the parent's endpoint
};
template <>
struct wire::shape<initialize_params> {
  static constexpr bool params_may_be_null = true;  // initialize's params are all optional
  // protocolVersion: at most 32 bytes; written as "1" when empty.
  struct version_text {
    text codec;
    std::string read(const field_reader& r, std::string_view key, const context& c) const {
      return codec.read(r, key, c);
    }
    json write(const std::string& v) const { return v.empty() ? std::string(protocol_version) : v; }
  };
  static constexpr auto fields = std::tuple{
      optional_field("protocolVersion", &initialize_params::protocol_version, version_text{text_within_bytes(32)}),
      optional_field("clientName", &initialize_params::client_name, text_within(&wire_limits::max_title_bytes),
                     when_default::omitted),
      optional_field("parentId", &initialize_params::parent_id, id, when_default::omitted)};
};
struct initialize_result {
  std::string protocol_version;          // protocolVersion: the daemon's, "1"
  std::string server_version;            // serverVersion: handoffd's version
  std::optional<std::string> parent_id;  // parentId: echoed when registered as endpoint (else null)
  std::string artifact_dir;              // artifactDir: absolute path of the artifact store
  json limits;                           // limits: the effective caps (frame, fields, surfaces)
};
template <>
struct wire::shape<initialize_result> {
  static constexpr auto fields = std::tuple{
      field("protocolVersion", &initialize_result::protocol_version, any_text),
      field("serverVersion", &initialize_result::server_version, any_text),
      optional_field("parentId", &initialize_result::parent_id, any_text),
      field("artifactDir", &initialize_result::artifact_dir, any_text),
      field("limits", &initialize_result::limits, any_object)};
};

struct started_params {
  std::string parent_id;  // parentId
  std::string child_id;   // childId
  std::string title;      // title: optional, "" when absent
};
template <>
struct wire::shape<started_params> {
  static constexpr auto fields = std::tuple{
      field("parentId", &started_params::parent_id, id),
      field("childId", &started_params::child_id, id),
      optional_field("title", &started_params::title, text_within(&wire_limits::max_title_bytes),
                     when_default::omitted)};
};
struct started_result {
  std::string state;  // state: "running", or the state it already had
};
template <>
struct wire::shape<started_result> {
  static constexpr auto fields = std::tuple{field("state", &started_result::state, any_text)};
};

struct progress_params {  // a notification
  std::string parent_id;  // parentId
  std::string child_id;   // childId
  std::string text;       // text: recent activity, <= max_progress_bytes
};
template <>
struct wire::shape<progress_params> {
  static constexpr auto fields = std::tuple{
      field("parentId", &progress_params::parent_id, id),
      field("childId", &progress_params::child_id, id),
      field("text", &progress_params::text, text_within(&wire_limits::max_progress_bytes))};
};

struct completed_params {
  std::string parent_id;        // parentId
  std::string child_id;         // childId
  std::string title;            // title: optional, "" when absent
  std::string status;           // status: "done" | "error" | "cancelled" (required)
  std::string error;            // error: optional, "" when absent
  std::string final_text;       // finalText: the exact final answer, UTF-8
};
template <>
struct wire::shape<completed_params> {
  static constexpr auto fields = std::tuple{
      field("parentId", &completed_params::parent_id, id),
      field("childId", &completed_params::child_id, id),
      optional_field("title", &completed_params::title, text_within(&wire_limits::max_title_bytes),
                     when_default::omitted),
      field("status", &completed_params::status, one_of_strings("done", "error", "cancelled")),
      optional_field("error", &completed_params::error, text_within(&wire_limits::max_error_bytes),
                     when_default::omitted),
      field("finalText", &completed_params::final_text, text_within(&wire_limits::max_final_text_bytes))};
};
struct completed_result {
  bool duplicate = false;       // duplicate: an identical completion was already held
  std::string sha256;           // sha256: of finalText, 64 lowercase hex
  std::size_t bytes = 0;        // bytes: finalText's UTF-8 bytes
  std::size_t lines = 0;        // lines: finalText's lines (split("\n"))
};
template <>
struct wire::shape<completed_result> {
  static constexpr auto fields = std::tuple{
      field("duplicate", &completed_result::duplicate, boolean),
      field("sha256", &completed_result::sha256, any_text),
      field("bytes", &completed_result::bytes, count),
      field("lines", &completed_result::lines, count)};
};

struct check_params {
  std::string parent_id;  // parentId
  std::string child_id;   // childId
};
template <>
struct wire::shape<check_params> {
  static constexpr auto fields = std::tuple{
      field("parentId", &check_params::parent_id, id),
      field("childId", &check_params::child_id, id)};
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
template <>
struct wire::shape<check_result> {
  static constexpr auto fields = std::tuple{
      field("childId", &check_result::child_id, any_text),
      field("title", &check_result::title, any_text),
      field("state", &check_result::state, any_text),
      optional_field("status", &check_result::status, any_text, when_default::null),
      optional_field("error", &check_result::error, any_text, when_default::omitted),
      field("preview", &check_result::preview, any_text),
      field("previewTruncated", &check_result::preview_truncated, boolean),
      optional_field("bytes", &check_result::bytes, count),
      optional_field("lines", &check_result::lines, count)};
};

// The harnesses whose tools a footer's calls can be for (subagent/wait's `reader`), in the
// order of engine/text/reader_profile.hpp's reader_profiles (daemon/service/wait.cpp checks it).
inline constexpr std::string_view reader_names[] = {"pi", "claude-code", "codex", "gemini", "opencode", "cline", "copilot"};
inline constexpr auto reader_name = [] {
  wire::one_of<std::size(reader_names)> codec{};
  for (std::size_t i = 0; i < std::size(reader_names); ++i) codec.allowed[i] = reader_names[i];
  return codec;
}();
// The least maxBytes a wait takes: room for a section's header, a minimal cut and its footer.
inline constexpr std::int64_t min_wait_max_bytes = 4096;

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
  // reader: whose tools the footers' calls are for, one of reader_names (default "pi";
  // engine/text/reader_profile.hpp).
  std::string reader = "pi";
  // withReady: the batch also takes every other child of the parent that has completed and is
  // neither delivered nor listed by another wait (in completion order), and answers it too; it
  // waits for none of them. Claude Code's background agents: reports that are ready together
  // share one budget.
  bool with_ready = false;
  // maxBytes: the most bytes of one answer the caller's harness shows whole (Codex cuts an MCP
  // tool's output): the batch's text, and so each result in it, is kept within it. Lowers the
  // wait caps only; none: the caps as they are.
  std::optional<std::int64_t> max_bytes = std::nullopt;
};
template <>
struct wire::shape<wait_params> {
  static constexpr auto fields = std::tuple{
      field("parentId", &wait_params::parent_id, id),
      field("childIds", &wait_params::child_ids, ids),
      optional_field("timeoutMs", &wait_params::timeout_ms, integer<std::int64_t>{0, &wire_limits::max_timeout_ms},
                     when_default::omitted),
      optional_field("usage", &wait_params::usage, object_of<usage_dto>, when_default::omitted),
      optional_field("batchWith", &wait_params::batch_with, id_list{.may_be_empty = true}, when_default::omitted),
      optional_field("reader", &wait_params::reader, reader_name, when_default::omitted),
      optional_field("withReady", &wait_params::with_ready, boolean, when_default::omitted),
      optional_field("maxBytes", &wait_params::max_bytes, integer<std::int64_t>{min_wait_max_bytes},
                     when_default::omitted)};
};
struct wait_result {
  batch_dto batch;                      // flattened on the wire: sections, text, deferred, budget
  bool timed_out = false;               // timedOut: returned at timeoutMs with children pending
  std::vector<std::string> pending;     // pending: listed children not completed yet
  std::vector<std::string> already_delivered;  // alreadyDelivered: delivered before this wait (not repeated)
  std::vector<std::string> cancelled;   // cancelled: listed children the parent cancelled
  std::vector<std::string> forgotten = {};  // forgotten: delivered, then forgotten (--forget-after-ms)
};
template <>
struct wire::shape<wait_result> {
  // alreadyDelivered and cancelled were added in 0.1.1, forgotten after it: an older daemon
  // leaves them out.
  static constexpr auto fields = std::tuple{
      flatten(&wait_result::batch),
      field("timedOut", &wait_result::timed_out, boolean),
      field("pending", &wait_result::pending, strings),
      optional_field("alreadyDelivered", &wait_result::already_delivered, strings, when_default::written,
                     presence::absent_ok),
      optional_field("cancelled", &wait_result::cancelled, strings, when_default::written, presence::absent_ok),
      optional_field("forgotten", &wait_result::forgotten, strings, when_default::written, presence::absent_ok)};
};

struct cancel_params {
  std::string parent_id;                // parentId
  std::vector<std::string> child_ids;   // childIds: 1..64, unique
};
template <>
struct wire::shape<cancel_params> {
  static constexpr auto fields = std::tuple{
      field("parentId", &cancel_params::parent_id, id),
      field("childIds", &cancel_params::child_ids, ids)};
};
struct cancel_result {
  std::vector<std::string> cancelled;   // cancelled: ids that were known
  std::size_t consumed = 0;             // consumed: completed results dropped with them
};
template <>
struct wire::shape<cancel_result> {
  static constexpr auto fields = std::tuple{
      field("cancelled", &cancel_result::cancelled, strings),
      field("consumed", &cancel_result::consumed, count)};
};

// $/cancelRequest (a notification, as in LSP): the id of a request of the same connection.
struct cancel_request_params {
  nlohmann::json id;  // id: a string or an integer, as the request had it
};
// id: a string (with any id's caps) or an integer: a custom rule (messages.cpp).
template <>
struct wire::shape<cancel_request_params> {
  static void read(const field_reader& r, cancel_request_params& out, const context& c);
  static void write(const cancel_request_params& v, json& j);
  struct string_or_integer {
    static constexpr std::string_view kind = "string|integer";
  };
  static constexpr auto fields = std::tuple{field("id", &cancel_request_params::id, string_or_integer{})};
};

struct parent_state_params {  // a notification
  std::string parent_id;  // parentId
  std::string state;      // state: "busy" | "idle"
};
template <>
struct wire::shape<parent_state_params> {
  static constexpr auto fields = std::tuple{
      field("parentId", &parent_state_params::parent_id, id),
      field("state", &parent_state_params::state, one_of_strings("busy", "idle"))};
};

struct artifact_read_params {
  std::string sha256;                  // sha256: 64 lowercase hex
  std::size_t offset = 1;              // offset: first line, 1-based; default 1
  std::optional<std::size_t> limit;    // limit: max lines, >= 1; default: to the end (still capped)
};
template <>
struct wire::shape<artifact_read_params> {
  // 64 lowercase hex digits, checked before the value is copied: a wrong one may be large.
  struct sha256_hex {
    static constexpr std::string_view kind = "string";
    std::string read(const field_reader& r, std::string_view key, const context&) const;
  };
  static constexpr auto fields = std::tuple{
      field("sha256", &artifact_read_params::sha256, sha256_hex{}),
      optional_field("offset", &artifact_read_params::offset, integer<std::size_t>{1}),
      optional_field("limit", &artifact_read_params::limit, integer<std::size_t>{1}, when_default::omitted)};
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
template <>
struct wire::shape<artifact_read_result> {
  static constexpr auto fields = std::tuple{
      field("path", &artifact_read_result::path, any_text),
      field("text", &artifact_read_result::text, any_text),
      field("firstLine", &artifact_read_result::first_line, count),
      field("lastLine", &artifact_read_result::last_line, count),
      field("totalLines", &artifact_read_result::total_lines, count),
      field("cut", &artifact_read_result::cut, boolean),
      optional_field("nextOffset", &artifact_read_result::next_offset, count)};
};

// daemon/status and daemon/gc: protocol/daemon_messages.hpp.

// ---- methods (daemon -> client) -------------------------------------------------------------

struct usage_request_params {
  std::string parent_id;  // parentId: whose usage is asked
};
template <>
struct wire::shape<usage_request_params> {
  static constexpr auto fields = std::tuple{field("parentId", &usage_request_params::parent_id, any_text)};
};
// context/usage result: usage_dto or null.

struct deliver_params {
  std::string parent_id;    // parentId
  std::string delivery_id;  // deliveryId: stable across resends of the same batch
  batch_dto batch;          // flattened on the wire: sections, text, deferred, budget
};
template <>
struct wire::shape<deliver_params> {
  static constexpr auto fields = std::tuple{
      field("parentId", &deliver_params::parent_id, any_text),
      field("deliveryId", &deliver_params::delivery_id, any_text),
      flatten(&deliver_params::batch)};
};

// parent/deliver's result: {} (the batch is taken).
struct deliver_result {};
template <>
struct wire::shape<deliver_result> {
  static constexpr auto fields = std::tuple{};
  static constexpr bool result_ignored = true;  // any result ({}, null, true) acknowledges
};

// ---- JSON conversions ----------------------------------------------------------------------
// The walks of wire.hpp over the shapes above. Decoders throw rpc_error{invalid_params} naming
// the field; encoders never throw.

template <wire::described T>
json encode(const T& v) {
  return wire::write_object(v);
}

// Params as the daemon receives them, checked against its caps. From an rvalue the strings are
// moved out of `params` instead of copied (a finalText is up to 64 MiB).
template <wire::described T>
T decode_params(const json& params, const wire_limits& lim) {
  return wire::read_params<T>(params, lim);
}
template <wire::described T>
T decode_params(json&& params, const wire_limits& lim) {
  return wire::read_params<T>(params, lim, &params);
}

// A result (or a daemon -> client request's params) as a client receives it: every type checked,
// no caps.
template <wire::described T>
T decode_result(const json& result) {
  return wire::read_result<T>(result);
}

// Every member but finalText, for a writer that appends the text itself (the C++ client: a
// final text of up to 64 MiB is not copied into a json on its way to the socket).
json encode_without_final_text(const completed_params& v);

// A usage or a section read on its own, named in messages by `where`, and the daemon -> client
// requests' params with the default caps (tests and fuzzers; any other message is
// decode_params<T> or decode_result<T>).
inline usage_dto decode_usage(const json& j, std::string_view where = "usage") {
  return wire::read_object<usage_dto>(j, std::string(where), wire::context{wire::default_limits()});
}
inline section_dto decode_section(const json& j) {
  return wire::read_object<section_dto>(j, "section", wire::context{wire::default_limits()});
}
inline usage_request_params decode_usage_request(const json& p) {
  return decode_params<usage_request_params>(p, wire::default_limits());
}
inline deliver_params decode_deliver(const json& p) { return decode_params<deliver_params>(p, wire::default_limits()); }
}  // namespace handoff::rpc
