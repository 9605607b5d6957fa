// Feeding the same bytes to a decoder in different pieces: whole, one byte
// at a time, and at random split points. A decoder must give the same events
// whichever way its input was cut.
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <span>
#include <string>
#include <vector>

namespace flockbridge::testing {

using Chunk = std::span<const std::uint8_t>;

struct Split {
  std::string name;
  std::function<std::vector<Chunk>(Chunk)> cut;
};

inline std::vector<Split> splits(unsigned random_rounds = 8) {
  std::vector<Split> result;
  result.push_back({"whole", [](Chunk all) { return std::vector<Chunk>{all}; }});
  result.push_back({"byte by byte", [](Chunk all) {
                      std::vector<Chunk> pieces;
                      for (std::size_t i = 0; i < all.size(); ++i) pieces.push_back(all.subspan(i, 1));
                      return pieces;
                    }});
  for (unsigned seed = 1; seed <= random_rounds; ++seed) {
    result.push_back({"random split " + std::to_string(seed), [seed](Chunk all) {
                        std::mt19937 random(seed);
                        std::vector<Chunk> pieces;
                        std::size_t at = 0;
                        while (at < all.size()) {
                          std::uniform_int_distribution<std::size_t> length(1,
                                                                            std::min<std::size_t>(all.size() - at, 7));
                          const std::size_t n = length(random);
                          pieces.push_back(all.subspan(at, n));
                          at += n;
                        }
                        return pieces;
                      }});
  }
  return result;
}

}  // namespace flockbridge::testing
