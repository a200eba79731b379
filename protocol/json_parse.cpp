#include "protocol/json_parse.hpp"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "protocol/json_fast_path.hpp"

namespace handoff::rpc {
namespace {

// nlohmann's message without its "[json.exception.parse_error.101] parse error at line 1,
// column 7: syntax error while parsing value - " preamble and without its "last read: '...'"
// quote of the input, which may be megabytes long and is not ours to echo. What it expected is
// kept when it is one of nlohmann's token names (so never text from the input).
std::string describe(const nlohmann::json::exception& e) {
  if (e.id == 406) return "number out of range";
  const std::string_view what = e.what();
  std::string_view reason = what;
  if (const auto dash = reason.find(" - "); dash != reason.npos) reason.remove_prefix(dash + 3);
  reason = reason.substr(0, std::min(reason.find("; last read: "), reason.find("; expected ")));
  constexpr std::size_t max_reason_bytes = 120;  // nlohmann's own words are ASCII and short
  std::string text(reason.substr(0, max_reason_bytes));
  // nlohmann's token_type_name()s that can follow "expected".
  static constexpr std::string_view token_names[] = {
      "end of input",   "'[', '{', or a literal", "'['",          "'{'",
      "']'",            "'}'",                    "':'",          "','",
      "string literal", "number literal",         "true literal", "false literal",
      "null literal"};
  if (const auto at = what.rfind("; expected "); at != what.npos) {
    const std::string_view expected = what.substr(at + 11);
    for (std::string_view name : token_names)
      if (expected == name) text += "; expected " + std::string(name);
  }
  return text;
}

// Builds the DOM, counting open containers.
class bounded_dom final : public nlohmann::json_sax<nlohmann::json> {
 public:
  explicit bounded_dom(std::size_t max_depth) : max_depth_(max_depth) {}

  nlohmann::json take() { return std::move(root_); }

  bool null() override { return add(nullptr); }
  bool boolean(bool v) override { return add(v); }
  bool number_integer(number_integer_t v) override { return add(v); }
  bool number_unsigned(number_unsigned_t v) override { return add(v); }
  bool number_float(number_float_t v, const string_t&) override { return add(v); }
  // The lexer's buffer is cleared before the next token, so its string may be moved from.
  bool string(string_t& v) override { return add(std::move(v)); }
  bool binary(binary_t&) override { return false; }  // CBOR & co. only; not in JSON text
  bool start_object(std::size_t) override { return open(nlohmann::json::object()); }
  bool key(string_t& k) override {
    key_ = std::move(k);
    return true;
  }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return open(nlohmann::json::array()); }
  bool end_array() override { return close(); }

  bool parse_error(std::size_t position, const std::string&,
                   const nlohmann::json::exception& e) override {
    throw json_parse_error("invalid JSON at byte " + std::to_string(position) + ": " + describe(e));
  }

 private:
  // Places a value in the innermost open container and returns where it now lives. Pointers on
  // open_ stay valid: only the innermost container grows, and its own slot does not move.
  nlohmann::json* place(nlohmann::json&& v) {
    if (open_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    nlohmann::json& parent = *open_.back();
    if (parent.is_array()) {
      parent.push_back(std::move(v));
      return &parent.back();
    }
    nlohmann::json& slot = parent[key_];  // a duplicate key overwrites: the last one wins
    slot = std::move(v);
    return &slot;
  }
  bool add(nlohmann::json&& v) {
    place(std::move(v));
    return true;
  }
  bool open(nlohmann::json&& container) {
    if (open_.size() >= max_depth_)
      throw json_parse_error("invalid JSON: nested deeper than " + std::to_string(max_depth_) + " levels");
    open_.push_back(place(std::move(container)));
    return true;
  }
  bool close() {
    open_.pop_back();
    return true;
  }

  std::size_t max_depth_;
  nlohmann::json root_;
  std::vector<nlohmann::json*> open_;  // the containers not closed yet, outermost first
  std::string key_;                    // the key of the next value in the innermost object
};

}  // namespace

nlohmann::json parse_json(std::string_view text, std::size_t max_depth) {
  // Most frames are plain valid JSON: the fast path builds them. Anything else, errors
  // included, is decided (and described) by nlohmann's parser below.
  if (auto fast = parse_json_fast(text, max_depth)) return std::move(*fast);
  bounded_dom dom(max_depth);
  const bool ok = nlohmann::json::sax_parse(text.data(), text.data() + text.size(), &dom);
  if (!ok) throw json_parse_error("invalid JSON");  // binary(): not reachable from text
  return dom.take();
}

}  // namespace handoff::rpc
