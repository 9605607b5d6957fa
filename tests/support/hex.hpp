// Bytes written as text in tests: "FA FB 03 00 00 00".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace flockbridge::testing {

/// Pairs of hex digits separated by one space each.
inline std::vector<std::uint8_t> hex(std::string_view text) {
  std::vector<std::uint8_t> out;
  for (std::size_t i = 0; i + 1 < text.size(); i += 3) {
    out.push_back(static_cast<std::uint8_t>(std::stoi(std::string(text.substr(i, 2)), nullptr, 16)));
  }
  return out;
}

}  // namespace flockbridge::testing
