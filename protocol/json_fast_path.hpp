// The fast path of parse_json (json_parse.hpp): a strict RFC 8259 parser for the documents we
// actually receive, built for long strings (a finalText of megabytes): it scans a string 16 bytes
// at a time (json_scan.hpp) and copies it in runs, where nlohmann's lexer handles each byte
// several times (about 140 MB/s on large strings, against GB/s here).
//
// It only ever accepts: any text it is not sure about (an error of any kind, nesting at or past
// max_depth, a byte-order mark, a float it cannot convert exactly as nlohmann does...) gives
// nullopt, and the caller parses it again with nlohmann's parser, which accepts it or reports
// the error exactly as before. What it accepts it builds as nlohmann's parser would: the same
// values with the same number types (a non-negative integer is unsigned, a negative one signed,
// one out of 64-bit range a double), and the last of duplicate keys.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

namespace handoff::rpc {

// The document, or nullopt when the slow path must decide. `max_depth` as in parse_json: the
// message object itself is level 1.
std::optional<nlohmann::json> parse_json_fast(std::string_view text, std::size_t max_depth);

}  // namespace handoff::rpc
