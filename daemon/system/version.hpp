#pragma once

namespace handoff::daemon {
// From the CMake project version.
inline constexpr const char* handoff_version = HANDOFF_VERSION;
}  // namespace handoff::daemon
