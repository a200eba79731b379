// Byte counts for people: "512 B", "12.3 KiB", "4.0 GiB" (binary units, one decimal).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace handoff::cli {

inline std::string format_byte_size(std::uint64_t bytes) {
  static constexpr const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024) return std::to_string(bytes) + " B";
  double value = static_cast<double>(bytes) / 1024;
  std::size_t unit = 0;
  while (value >= 1024 && unit + 1 < std::size(units)) {
    value /= 1024;
    ++unit;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %s", value, units[unit]);
  return buf;
}

}  // namespace handoff::cli
