// The nearest of some names to one that was mistyped, for "did you mean"
// in the messages of the command line and the configuration file.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace flockbridge::bridge {

/// How many single-character edits (insertions, deletions, substitutions,
/// swaps of neighbours) turn `a` into `b`, ignoring case.
[[nodiscard]] std::size_t edit_distance(std::string_view a, std::string_view b);

/// The name nearest to `typed` among `names`, when one is near enough to be
/// what was meant (a third of its length in edits, at least 2, or `typed`
/// is the start of it); nothing otherwise.
[[nodiscard]] std::optional<std::string> nearest(std::string_view typed, std::span<const std::string_view> names);

/// " (did you mean 'x'?)", or nothing when no name is near.
[[nodiscard]] std::string did_you_mean(std::string_view typed, std::span<const std::string_view> names);

}  // namespace flockbridge::bridge
