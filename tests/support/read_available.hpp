// What a non-blocking descriptor holds now, read to the end without waiting.
#pragma once

#include <unistd.h>

#include <array>
#include <string>

namespace flockbridge::testing {

/// Every byte that can be read from `fd` now (a non-blocking socket or pipe):
/// empty when nothing is there.
inline std::string read_available(int fd) {
  std::string all;
  std::array<char, 4096> chunk{};
  for (;;) {
    const ssize_t got = ::read(fd, chunk.data(), chunk.size());
    if (got <= 0) return all;
    all.append(chunk.data(), static_cast<std::size_t>(got));
  }
}

}  // namespace flockbridge::testing
