// One description per wire struct, walked by one decoder and one encoder (as clangd's
// Protocol.h pairs fromJSON and toJSON, but written once). A struct's description is a
// specialization of `wire::shape<T>` next to the struct (messages.hpp, daemon_messages.hpp):
//
//   template <> struct shape<started_params> {
//     static constexpr auto fields = std::tuple{
//         field("parentId", &started_params::parent_id, id),
//         field("childId", &started_params::child_id, id),
//         optional_field("title", &started_params::title, text_within(&wire_limits::max_title_bytes),
//                        when_default::omitted)};
//   };
//
// Decoding walks the fields in order through a field_reader, so the first wrong member is the
// one named ("childId: required", -32602); encoding writes each field into a JSON object (whose
// keys nlohmann keeps sorted, so the bytes do not depend on the order). The same walks also run
// over text, with no json built: append_object writes a struct's JSON (members in the order the
// shape lists them; the daemon's replies), and read_text_object reads one from a json_reader (the
// client's replies, rpc::read_response), declining anything unusual so that the field_reader
// walk decides it and names what is wrong. A struct with rules no
// field list says (artifact_dto: members that depend on `saved`) gives `read` and `write`
// instead of `fields`; a field with such rules is a small type with the same two members
// (section_dto's `omitted`). `fields_of<T>()` lists a description for other languages
// (client/pi checks its validators against it).
#pragma once

#include <array>
#include <concepts>
#include <cstring>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "protocol/field_reader.hpp"
#include "protocol/json_dump.hpp"
#include "protocol/json_reader.hpp"
#include "protocol/wire_limits.hpp"

namespace handoff::rpc::wire {

using json = nlohmann::json;

// The primary template is never defined: a type is a wire struct when it has a shape.
template <class T>
struct shape;

template <class T>
concept described = requires { sizeof(shape<T>); };

// What a decoder reads with: the daemon's caps, and the object being read when its strings may
// be moved out instead of copied (the daemon's params: a finalText is up to 64 MiB).
struct context {
  const wire_limits& lim;
  json* movable = nullptr;
};

// ---- JSON text, written straight from the values ---------------------------------------------
// Every member is written followed by ',', and the container's last ',' becomes its closing
// bracket (or the bracket follows the opening one: an empty container).
inline void close_container(std::string& out, char bracket) {
  if (out.back() == ',')
    out.back() = bracket;
  else
    out += bracket;
}

// A member's key and colon, in one append. Keys are the shapes' own names: short plain ASCII,
// nothing to escape.
inline void append_key(std::string& out, std::string_view name) {
  char key[64];
  if (name.size() + 3 > sizeof key) {
    out.append("\"").append(name).append("\":");
    return;
  }
  key[0] = '"';
  std::memcpy(key + 1, name.data(), name.size());
  key[name.size() + 1] = '"';
  key[name.size() + 2] = ':';
  out.append(key, name.size() + 3);
}

// A value of a member's own type, as write_value's json(v) would be written.
template <class V>
void append_plain(std::string& out, const V& v) {
  if constexpr (std::same_as<V, std::string>) {
    append_json_string_replacing(out, v);
  } else if constexpr (std::same_as<V, bool>) {
    out += v ? "true" : "false";
  } else if constexpr (std::integral<V>) {
    append_json_integer(out, v);
  } else if constexpr (std::same_as<V, std::vector<std::string>>) {
    out += '[';
    for (const std::string& e : v) {
      append_json_string_replacing(out, e);
      out += ',';
    }
    close_container(out, ']');
  } else {
    append_json_replacing(out, json(v));  // a double: nlohmann's own formatting
  }
}

// ---- codecs: how one member's value is read and written ---------------------------------------
// `read(reader, key, context)` returns the value (the member is there, or absent and required:
// the reader names it); `write(value)` returns its JSON, when the value's own is not right.

// A size cap: a fixed number of bytes, or one of wire_limits.
struct byte_cap {
  std::size_t wire_limits::*limit = nullptr;
  std::size_t fixed = field_reader::unlimited;
  std::size_t of(const wire_limits& lim) const { return limit != nullptr ? lim.*limit : fixed; }
};

// A string of at most `cap` bytes.
struct text {
  static constexpr std::string_view kind = "string";
  byte_cap cap{};
  std::string read(const field_reader& r, std::string_view key, const context& c) const {
    if (c.movable == nullptr) return r.string(key, cap.of(c.lim));
    r.check_string(key, cap.of(c.lim));
    return std::move(c.movable->find(key)->get_ref<std::string&>());
  }
  bool read_text(json_reader& r, std::string& out, const context& c) const {
    std::string_view s;
    if (!r.string(s) || s.size() > cap.of(c.lim)) return false;
    out.assign(s);
    return true;
  }
};
inline constexpr text any_text{};
constexpr text text_within(std::size_t wire_limits::*limit) { return text{byte_cap{limit}}; }
constexpr text text_within_bytes(std::size_t max_bytes) { return text{byte_cap{nullptr, max_bytes}}; }

// An identifier: 1..max_id_bytes bytes, no control characters.
struct identifier {
  static constexpr std::string_view kind = "string";
  std::string read(const field_reader& r, std::string_view key, const context& c) const {
    return r.id(key, c.lim.max_id_bytes);
  }
  bool read_text(json_reader& r, std::string& out, const context& c) const {
    std::string_view s;
    if (!r.string(s) || !id_problem(s, c.lim.max_id_bytes).empty()) return false;
    out.assign(s);
    return true;
  }
};
inline constexpr identifier id{};

// One of a closed set of strings.
template <std::size_t N>
struct one_of {
  static constexpr std::string_view kind = "string";
  std::array<std::string_view, N> allowed;
  std::string read(const field_reader& r, std::string_view key, const context&) const {
    return r.one_of(key, allowed);
  }
  bool read_text(json_reader& r, std::string& out, const context&) const {
    std::string_view s;
    if (!r.string(s)) return false;
    for (std::string_view a : allowed)
      if (s == a) {
        out.assign(s);
        return true;
      }
    return false;
  }
};
template <class... S>
constexpr auto one_of_strings(S... allowed) {
  return one_of<sizeof...(S)>{{std::string_view(allowed)...}};
}

// An array of 1..max_child_ids unique identifiers; `may_be_empty`: [] is fine too.
struct id_list {
  static constexpr std::string_view kind = "string[]";
  bool may_be_empty = false;
  std::vector<std::string> read(const field_reader& r, std::string_view key, const context& c) const {
    if (may_be_empty && r.array(key).empty()) return {};
    return r.id_list(key, c.lim.max_child_ids, c.lim.max_id_bytes);
  }
};
inline constexpr id_list ids{};

// An array of strings, uncapped (results the daemon wrote).
struct string_list {
  static constexpr std::string_view kind = "string[]";
  std::vector<std::string> read(const field_reader& r, std::string_view key, const context&) const {
    return r.string_list(key);
  }
  bool read_text(json_reader& r, std::vector<std::string>& out, const context&) const {
    if (!r.take('[')) return false;
    if (r.take(']')) return true;
    do {
      std::string s;
      if (!r.string(s)) return false;
      out.push_back(std::move(s));
    } while (r.take(','));
    return r.take(']');
  }
};
inline constexpr string_list strings{};

// An integer in [min, max] (max: a wire_limits member when set), as the member's type.
template <class I>
struct integer {
  static constexpr std::string_view kind = "integer";
  std::int64_t min = 0;
  std::int64_t wire_limits::*max_limit = nullptr;
  I read(const field_reader& r, std::string_view key, const context& c) const {
    const std::int64_t max = max_limit != nullptr ? c.lim.*max_limit : field_reader::max_int;
    return static_cast<I>(r.integer(key, min, max));
  }
  bool read_text(json_reader& r, I& out, const context& c) const {
    const std::int64_t max = max_limit != nullptr ? c.lim.*max_limit : field_reader::max_int;
    std::int64_t v = 0;
    if (!r.integer(v) || v < min || v > max) return false;
    out = static_cast<I>(v);
    return true;
  }
};
// A count or a size: an integer >= 0.
inline constexpr integer<std::size_t> count{};
inline constexpr integer<std::uint64_t> count64{};
inline constexpr integer<std::int64_t> any_integer{std::numeric_limits<std::int64_t>::min()};

struct boolean_codec {
  static constexpr std::string_view kind = "boolean";
  bool read(const field_reader& r, std::string_view key, const context&) const { return r.boolean(key); }
  bool read_text(json_reader& r, bool& out, const context&) const { return r.boolean(out); }
};
inline constexpr boolean_codec boolean{};

// Any JSON number.
struct number_codec {
  static constexpr std::string_view kind = "number";
  double read(const field_reader& r, std::string_view key, const context&) const { return r.number(key); }
};
inline constexpr number_codec number{};

// Any JSON object, kept as it is (initialize's `limits`).
struct object_codec {
  static constexpr std::string_view kind = "object";
  json read(const field_reader& r, std::string_view key, const context&) const { return r.object(key); }
  json write(const json& v) const { return v.is_object() ? v : json::object(); }
};
inline constexpr object_codec any_object{};

template <described T>
void read_fields(const field_reader& r, T& out, const context& c);
template <described T>
void write_fields(const T& v, json& j);
template <described T>
void append_fields(const T& v, std::string& out);
template <described T>
void append_object(const T& v, std::string& out);
template <described T>
bool read_text_object(json_reader& r, T& out, const context& c);
template <described T>
void describe_fields(json& fields);
// The fields of T, for other languages: [{name, type, optional, nullable}], in order; `optional`:
// may be absent, `nullable`: may be null.
template <described T>
json fields_of() {
  json fields = json::array();
  describe_fields<T>(fields);
  return fields;
}

// A described struct as a JSON object.
template <described T>
T read_object(const json& j, std::string path, const context& c, std::string_view top = "params") {
  const field_reader r(j, std::move(path), top);
  T out{};
  read_fields(r, out, c);
  return out;
}

template <described T>
json write_object(const T& v) {
  json j = json::object();
  write_fields(v, j);
  return j;
}

template <described T>
struct nested {
  T read(const field_reader& r, std::string_view key, const context& c) const {
    return read_object<T>(r.object(key), r.path_of(key), context{c.lim});
  }
  json write(const T& v) const { return write_object(v); }
  void append(const T& v, std::string& out) const { append_object(v, out); }
  bool read_text(json_reader& r, T& out, const context& c) const { return read_text_object(r, out, context{c.lim}); }
  json type() const { return {{"object", fields_of<T>()}}; }
};
template <described T>
inline constexpr nested<T> object_of{};

// An array of described structs; elements are named "sections[3]".
template <described T>
struct list {
  std::vector<T> read(const field_reader& r, std::string_view key, const context& c) const {
    const json& a = r.array(key);
    const std::string path = r.path_of(key);
    std::vector<T> out;
    out.reserve(a.size());
    for (std::size_t i = 0; i < a.size(); ++i)
      out.push_back(read_object<T>(a[i], path + "[" + std::to_string(i) + "]", context{c.lim}));
    return out;
  }
  json write(const std::vector<T>& v) const {
    json a = json::array();
    for (const T& e : v) a.push_back(write_object(e));
    return a;
  }
  bool read_text(json_reader& r, std::vector<T>& out, const context& c) const {
    if (!r.take('[')) return false;
    if (r.take(']')) return true;
    do {
      T e{};
      if (!read_text_object(r, e, context{c.lim})) return false;
      out.push_back(std::move(e));
    } while (r.take(','));
    return r.take(']');
  }
  void append(const std::vector<T>& v, std::string& out) const {
    out += '[';
    for (const T& e : v) {
      append_object(e, out);
      out += ',';
    }
    close_container(out, ']');
  }
  json type() const { return {{"array", fields_of<T>()}}; }
};
template <described T>
inline constexpr list<T> list_of{};

// A codec's type for descriptions: "string", "integer"... or {"object": fields},
// {"array": fields}, {"oneOf": [...]}.
template <class C>
json type_of(const C& codec) {
  if constexpr (requires { codec.allowed; }) {
    json values = json::array();
    for (std::string_view a : codec.allowed) values.push_back(a);
    return {{"oneOf", std::move(values)}};
  } else if constexpr (requires { C::kind; }) {
    return std::string(C::kind);
  } else if constexpr (requires { codec.type(); }) {
    return codec.type();
  } else {
    return type_of(codec.codec);  // a codec that wraps another one
  }
}

// ---- fields ---------------------------------------------------------------------------------

// Whether a member must be there: `required`; `optional`: absent or null leaves the default;
// `absent_ok`: absent leaves the default, null is refused (fields added later to a result).
enum class presence { required, optional, absent_ok };
// How a member that holds its default (an empty std::optional, or the value a default-
// constructed struct has) is written: as it is (an empty std::optional as null), as null, or
// not at all.
enum class when_default { written, null, omitted };

template <class T>
const T& defaults() {
  static const T d{};
  return d;
}

template <class M>
inline constexpr bool is_optional = false;
template <class V>
inline constexpr bool is_optional<std::optional<V>> = true;
// What a codec reads for a member of type M: M, or V for a std::optional<V>.
template <class M>
struct optional_value {
  using type = M;
};
template <class V>
struct optional_value<std::optional<V>> {
  using type = V;
};

// Members whose default can be told by comparing (std::vector<T>'s == compiles for any T).
template <class M>
concept has_plain_default =
    std::is_arithmetic_v<M> || std::same_as<M, std::string> || std::same_as<M, std::vector<std::string>>;

template <class C, class V>
json write_value(const C& codec, const V& v) {
  if constexpr (requires { codec.write(v); })
    return codec.write(v);
  else
    return json(v);
}

template <class C, class V>
void append_value(std::string& out, const C& codec, const V& v) {
  if constexpr (requires { codec.append(v, out); })
    codec.append(v, out);
  else if constexpr (requires { codec.write(v); })
    append_json_replacing(out, codec.write(v));
  else
    append_plain(out, v);
}

template <class T, class M, class Codec>
struct member_field {
  std::string_view name;
  M T::*member;
  Codec codec;
  presence need = presence::required;
  when_default unset = when_default::written;

  void read(const field_reader& r, T& out, const context& c) const {
    if (need == presence::optional && r.find(name) == nullptr) return;
    if (need == presence::absent_ok && !r.has(name)) return;
    out.*member = codec.read(r, name, c);
  }

  void describe(json& fields) const {
    fields.push_back({{"name", name},
                      {"type", type_of(codec)},
                      {"optional", need != presence::required || unset == when_default::omitted},
                      {"nullable", unset == when_default::null || (is_optional<M> && unset == when_default::written)}});
  }

  // True when `m` is the member's unset value: an empty optional, or the default when the
  // shape does not write defaults as they are (write() and append() leave it out or write null).
  bool unset_in(const M& m) const {
    if constexpr (is_optional<M>)
      return !m.has_value();
    else if constexpr (has_plain_default<M>)
      return unset != when_default::written && m == defaults<T>().*member;
    else
      return false;
  }

  void write(const T& v, json& j) const {
    const M& m = v.*member;
    const bool is_default = unset_in(m);
    if (is_default && unset == when_default::omitted) return;
    if (is_default && (unset == when_default::null || is_optional<M>)) {
      j[std::string(name)] = nullptr;
      return;
    }
    if constexpr (is_optional<M>)
      j[std::string(name)] = write_value(codec, *m);
    else
      j[std::string(name)] = write_value(codec, m);
  }

  // read() from text (wire::read_text_object): the member's value, which is next in `r`. False
  // when the codec has no text reader, or the value is not one it takes.
  bool read_text(json_reader& r, T& out, const context& c) const {
    if (r.peek() == 'n') {  // null: as absent for an optional member, refused otherwise
      if (need != presence::optional || !r.null()) return false;
      out.*member = defaults<T>().*member;
      return true;
    }
    using V = typename optional_value<M>::type;
    if constexpr (requires(V& v) { codec.read_text(r, v, c); }) {
      V v{};
      if (!codec.read_text(r, v, c)) return false;
      out.*member = std::move(v);
      return true;
    } else {
      return false;
    }
  }

  // write() as text: the same member, or none, appended to `out` with its trailing ','.
  void append(const T& v, std::string& out) const {
    const M& m = v.*member;
    const bool is_default = unset_in(m);
    if (is_default && unset == when_default::omitted) return;
    append_key(out, name);
    if (is_default && (unset == when_default::null || is_optional<M>))
      out += "null";
    else if constexpr (is_optional<M>)
      append_value(out, codec, *m);
    else
      append_value(out, codec, m);
    out += ',';
  }
};

template <class T, class M, class Codec>
constexpr member_field<T, M, Codec> field(std::string_view name, M T::*member, Codec codec) {
  return {name, member, codec, presence::required, when_default::written};
}

template <class T, class M, class Codec>
constexpr member_field<T, M, Codec> optional_field(std::string_view name, M T::*member, Codec codec,
                                                   when_default unset = when_default::written,
                                                   presence need = presence::optional) {
  return {name, member, codec, need, unset};
}

// A member struct whose fields sit in the enclosing object (wait_result's batch).
template <class T, class U>
struct flattened {
  U T::*member;
  void read(const field_reader& r, T& out, const context& c) const { read_fields(r, out.*member, c); }
  void write(const T& v, json& j) const { write_fields(v.*member, j); }
  void append(const T& v, std::string& out) const { append_fields(v.*member, out); }
  void describe(json& fields) const { describe_fields<U>(fields); }
};
template <class T, class U>
constexpr flattened<T, U> flatten(U T::*member) {
  return {member};
}

// Members of the enclosing struct written as one nested object (gc_result's `limits`).
template <class T, class... F>
struct grouped {
  std::string_view name;
  std::tuple<F...> fields;
  void read(const field_reader& r, T& out, const context& c) const {
    const field_reader sub(r.object(name), r.path_of(name));
    std::apply([&](const auto&... f) { (f.read(sub, out, context{c.lim}), ...); }, fields);
  }
  void write(const T& v, json& j) const {
    json sub = json::object();
    std::apply([&](const auto&... f) { (f.write(v, sub), ...); }, fields);
    j[std::string(name)] = std::move(sub);
  }
  void append(const T& v, std::string& out) const {
    append_key(out, name);
    out += '{';
    std::apply([&](const auto&... f) { (f.append(v, out), ...); }, fields);
    close_container(out, '}');
    out += ',';
  }
  void describe(json& out) const {
    json sub = json::array();
    std::apply([&](const auto&... f) { (f.describe(sub), ...); }, fields);
    out.push_back({{"name", name}, {"type", {{"object", std::move(sub)}}}, {"optional", false}, {"nullable", false}});
  }
};
template <class T, class... M, class... C>
constexpr grouped<T, member_field<T, M, C>...> group(std::string_view name, member_field<T, M, C>... fields) {
  return {name, std::tuple{fields...}};
}

// ---- the walks ------------------------------------------------------------------------------

// A shape's own `read` and `write`, when it has them, take the place of the walk over `fields`
// (which then only describes the struct).
template <described T>
void read_fields(const field_reader& r, T& out, const context& c) {
  if constexpr (requires { shape<T>::read(r, out, c); })
    shape<T>::read(r, out, c);
  else
    std::apply([&](const auto&... f) { (f.read(r, out, c), ...); }, shape<T>::fields);
}

template <described T>
void write_fields(const T& v, json& j) {
  if constexpr (requires { shape<T>::write(v, j); })
    shape<T>::write(v, j);
  else
    std::apply([&](const auto&... f) { (f.write(v, j), ...); }, shape<T>::fields);
}

// The members of `j` (what a custom `write` wrote), each with its trailing ','.
inline void append_members(const json& j, std::string& out) {
  for (const auto& [key, value] : j.items()) {
    append_json_string_replacing(out, key);
    out += ':';
    append_json_replacing(out, value);
    out += ',';
  }
}

// write_fields as text: the members (each with its trailing ','), in the order the shape lists
// them; a shape with its own `write` is written through it.
template <described T>
void append_fields(const T& v, std::string& out) {
  if constexpr (requires(json& j) { shape<T>::write(v, j); }) {
    json j = json::object();
    shape<T>::write(v, j);
    append_members(j, out);
  } else {
    auto append_field = [&](const auto& f) {
      if constexpr (requires { f.append(v, out); }) {
        f.append(v, out);
      } else {  // a field type with rules of its own (section_dto's `omitted`) writes a json
        json j = json::object();
        f.write(v, j);
        append_members(j, out);
      }
    };
    std::apply([&](const auto&... f) { (append_field(f), ...); }, shape<T>::fields);
  }
}

// write_object as text, appended to `out`: what append_json(write_object(v)) writes, except for
// the order of the members (a json keeps them sorted; JSON objects have no order).
template <described T>
void append_object(const T& v, std::string& out) {
  out += '{';
  append_fields(v, out);
  close_container(out, '}');
}

// read_fields from text: the object next in `r`, its members in any order, read into `out`.
// False (json_reader.hpp: the caller reads the text the ordinary way) on anything else: a member
// the shape does not list, a required one missing, a value a codec does not take, a shape with
// its own `read`, or a field that is not a plain member (flatten, group).
template <described T>
bool read_text_object(json_reader& r, T& out, const context& c) {
  constexpr auto& fields = shape<T>::fields;
  constexpr std::size_t n = std::tuple_size_v<std::remove_cvref_t<decltype(fields)>>;
  static_assert(n <= 64, "read_text_object: at most 64 members (a bit each)");
  constexpr bool plain = []<std::size_t... I>(std::index_sequence<I...>) {
    return (requires { std::get<I>(fields).name; std::get<I>(fields).need; } && ...);
  }(std::make_index_sequence<n>());
  if constexpr (requires { shape<T>::read(std::declval<const field_reader&>(), out, c); } || !plain) {
    return false;
  } else {
    std::uint64_t seen = 0;
    std::size_t next = 0;  // the field after the last one read: handoffd writes them in order
    // The member named `key`, read; false when none is named so or its value is refused. The
    // field expected next is tried first, so that a key is usually compared once.
    auto member = [&]<std::size_t... I>(std::string_view key, std::index_sequence<I...>) {
      bool ok = false;
      auto read = [&](auto index) {
        constexpr std::size_t i = decltype(index)::value;
        ok = std::get<i>(fields).read_text(r, out, c);
        seen |= std::uint64_t{1} << i;
        next = i + 1;
        return true;
      };
      if (((I == next && std::get<I>(fields).name == key && read(std::integral_constant<std::size_t, I>{})) || ...))
        return ok;
      (void)((I != next && std::get<I>(fields).name == key && read(std::integral_constant<std::size_t, I>{})) || ...);
      return ok;
    };
    if (!r.take('{')) return false;
    if (!r.take('}')) {
      do {
        std::string_view key;
        if (!r.string(key) || !r.take(':') || !member(key, std::make_index_sequence<n>())) return false;
      } while (r.take(','));
      if (!r.take('}')) return false;
    }
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      return ((std::get<I>(fields).need != presence::required || (seen >> I & 1) != 0) && ...);
    }(std::make_index_sequence<n>());
  }
}

template <described T>
void describe_fields(json& fields) {
  std::apply([&](const auto&... f) { (f.describe(fields), ...); }, shape<T>::fields);
}

// The caps of a default daemon; results are read with them (their codecs have no caps).
inline const wire_limits& default_limits() {
  static const wire_limits lim{};
  return lim;
}

// Params as a method receives them: an object whose members are named bare ("parentId"); a
// shape with `params_may_be_null` takes null (no params) as {}, one with `params_ignored`
// takes anything as its defaults.
template <described T>
T read_params(const json& params, const wire_limits& lim, json* movable = nullptr) {
  if constexpr (requires { shape<T>::params_ignored; }) return T{};
  if constexpr (requires { shape<T>::params_may_be_null; })
    if (params.is_null()) return T{};
  return read_object<T>(params, "", context{lim, movable});
}

// A result as a client receives it: members named bare, "result: expected an object"; a shape
// with `result_ignored` takes any result as its defaults.
template <described T>
T read_result(const json& result) {
  if constexpr (requires { shape<T>::result_ignored; }) return T{};
  return read_object<T>(result, "", context{default_limits()}, "result");
}

}  // namespace handoff::rpc::wire
