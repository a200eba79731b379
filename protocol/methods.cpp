#include "protocol/methods.hpp"

#include <string>

namespace handoff::rpc {
namespace {

template <class T>
nlohmann::json result_description() {
  if constexpr (wire::is_optional<T>)
    return {{"nullable", true}, {"fields", wire::fields_of<typename T::value_type>()}};
  else
    return {{"nullable", false}, {"fields", wire::fields_of<T>()}};
}

template <class M>
nlohmann::json method_description(const M& m) {
  nlohmann::json d = {{"name", m.name},
                      {"direction", M::dir == direction::to_daemon ? "to_daemon" : "to_client"},
                      {"params", wire::fields_of<typename M::params_type>()}};
  if constexpr (requires { typename M::result_type; })
    d["result"] = result_description<typename M::result_type>();
  else
    d["notification"] = true;
  return d;
}

}  // namespace

nlohmann::json methods_description() {
  nlohmann::json list = nlohmann::json::array();
  std::apply([&](const auto&... m) { (list.push_back(method_description(m)), ...); }, methods::all);
  return list;
}

}  // namespace handoff::rpc
