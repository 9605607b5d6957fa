// How deep JSON may nest before the bridge reads it. Every parser the
// bridge uses on what it is sent (commands and their ids, Foxglove client
// messages, MQTT payloads, recordings) and every copy or answer made of it
// recurses once a level; a classmate's line of 80,000 nested arrays would
// take the stack. A command needs four levels; the bound leaves room.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace flockbridge::protocol {

/// The most arrays and objects inside one another in any JSON the bridge takes in.
inline constexpr std::size_t kJsonDepthLimit = 32;

/// Whether `text`, read as JSON, opens more than `limit` arrays and objects
/// inside one another (brackets inside strings do not count). Linear in the
/// text; allocates nothing; says nothing of whether the rest is valid.
[[nodiscard]] bool nests_deeper_than(std::string_view text, std::size_t limit = kJsonDepthLimit);

/// Why such JSON is refused: "nested deeper than 32 arrays and objects
/// inside one another".
[[nodiscard]] std::string nesting_error();

/// Json::parse without exceptions (a value that is_discarded() when the
/// text is not JSON), refusing JSON that nests deeper than kJsonDepthLimit
/// in the same way. For nlohmann::json and ordered_json alike.
template <class Json>
[[nodiscard]] Json parse_bounded_json(std::string_view text) {
  if (nests_deeper_than(text)) return Json(Json::value_t::discarded);
  return Json::parse(text, nullptr, false);
}

}  // namespace flockbridge::protocol
