#include "flockbridge/bridge/suggest.hpp"

#include <algorithm>
#include <cctype>
#include <vector>

namespace flockbridge::bridge {
namespace {

char folded(char c) {
  return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
}

}  // namespace

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // Optimal string alignment: Levenshtein's table, plus a swap of two
  // neighbours counted as one edit ("--simualte").
  const std::size_t rows = a.size() + 1;
  const std::size_t columns = b.size() + 1;
  std::vector<std::size_t> d(rows * columns);
  const auto at = [&](std::size_t i, std::size_t j) -> std::size_t& { return d[i * columns + j]; };
  for (std::size_t i = 0; i < rows; ++i) at(i, 0) = i;
  for (std::size_t j = 0; j < columns; ++j) at(0, j) = j;
  for (std::size_t i = 1; i < rows; ++i) {
    for (std::size_t j = 1; j < columns; ++j) {
      const std::size_t cost = folded(a[i - 1]) == folded(b[j - 1]) ? 0 : 1;
      at(i, j) = std::min({at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost});
      if (i > 1 && j > 1 && folded(a[i - 1]) == folded(b[j - 2]) && folded(a[i - 2]) == folded(b[j - 1])) {
        at(i, j) = std::min(at(i, j), at(i - 2, j - 2) + 1);
      }
    }
  }
  return at(a.size(), b.size());
}

std::optional<std::string> nearest(std::string_view typed, std::span<const std::string_view> names) {
  std::optional<std::string> best;
  std::size_t best_distance = std::max<std::size_t>(2, typed.size() / 3) + 1;
  for (const std::string_view name : names) {
    // A name begun and not finished is meant; a short prefix of many names says little.
    std::size_t distance = edit_distance(typed, name);
    if (typed.size() >= 4 && name.size() > typed.size() && edit_distance(typed, name.substr(0, typed.size())) == 0) {
      distance = std::min<std::size_t>(distance, 1);
    }
    if (distance < best_distance) {
      best_distance = distance;
      best = std::string(name);
    }
  }
  return best;
}

std::string did_you_mean(std::string_view typed, std::span<const std::string_view> names) {
  const auto found = nearest(typed, names);
  return found ? " (did you mean '" + *found + "'?)" : std::string();
}

}  // namespace flockbridge::bridge
