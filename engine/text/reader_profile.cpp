#include "engine/text/reader_profile.hpp"

namespace handoff {

const reader_profile* find_reader_profile(std::string_view name) noexcept {
  for (const reader_profile* profile : {&pi_reader, &claude_code_reader}) {
    if (profile->name == name) return profile;
  }
  return nullptr;
}

}  // namespace handoff
