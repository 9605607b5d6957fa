// libFuzzer: JSON nested as deep as a classmate likes. An input is a count
// and a pattern: the pattern's opening part repeated count times, its middle
// once, its closing part count times, so that 100,000 levels fit a short
// input (libFuzzer's inputs are a few KiB). Whatever the depth, the JSON
// port's and the Foxglove live view's parsers answer without crashing, an
// answer's id encodes, and the depth scan never lets through a text the
// JSON parser's own count of levels finds deeper than the bound (and agrees
// with it exactly on every valid text without a NUL byte).
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "flockbridge/protocol/flockbot/json.hpp"
#include "flockbridge/protocol/foxglove/foxglove.hpp"
#include "flockbridge/protocol/json_codec.hpp"
#include "flockbridge/protocol/json_depth.hpp"

using namespace flockbridge::protocol;

namespace {

/// The deepest level a valid text reaches, as nlohmann's event parser (which
/// keeps its own stack, not the machine's) counts it.
struct DepthCounter : nlohmann::json_sax<nlohmann::json> {
  std::size_t depth = 0;
  std::size_t deepest = 0;
  bool open() {
    deepest = std::max(deepest, ++depth);
    return true;
  }
  bool close() {
    --depth;
    return true;
  }
  bool null() override { return true; }
  bool boolean(bool /*value*/) override { return true; }
  bool number_integer(number_integer_t /*value*/) override { return true; }
  bool number_unsigned(number_unsigned_t /*value*/) override { return true; }
  bool number_float(number_float_t /*value*/, const string_t& /*text*/) override { return true; }
  bool string(string_t& /*value*/) override { return true; }
  bool binary(binary_t& /*value*/) override { return true; }
  bool start_object(std::size_t /*elements*/) override { return open(); }
  bool key(string_t& /*value*/) override { return true; }
  bool end_object() override { return close(); }
  bool start_array(std::size_t /*elements*/) override { return open(); }
  bool end_array() override { return close(); }
  bool parse_error(std::size_t /*position*/, const std::string& /*token*/,
                   const nlohmann::detail::exception& /*error*/) override {
    return false;
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 4) return 0;
  const std::size_t count = (std::size_t{data[0]} << 8 | data[1]) * 2;  // up to 131,070 levels
  const std::string_view pattern(reinterpret_cast<const char*>(data + 4), size - 4);
  const std::size_t first = pattern.empty() ? 0 : data[2] % (pattern.size() + 1);
  const std::size_t second = pattern.empty() ? 0 : first + data[3] % (pattern.size() - first + 1);
  const std::string_view opening = pattern.substr(0, first);
  const std::string_view middle = pattern.substr(first, second - first);
  const std::string_view closing = pattern.substr(second);
  if ((opening.size() + closing.size()) * count > (4u << 20)) return 0;  // 4 MiB at most
  std::string text;
  text.reserve((opening.size() + closing.size()) * count + middle.size());
  for (std::size_t i = 0; i < count; ++i) text += opening;
  text += middle;
  for (std::size_t i = 0; i < count; ++i) text += closing;

  auto parsed = json::parse_line(text);
  if (!parsed.object) (void)json::error(parsed.id, parsed.object.error());
  else (void)json::ok(parsed.id);
  auto request = flockbot::parse_json_request(text);
  if (!request.request) (void)json::error(request.id, request.request.error());
  (void)foxglove::parse_client_text(text);

  // The scan never lets through a text the parser would take deeper than
  // the bound; on a text it reads whole, it says just what the parser does.
  // (nlohmann's parser ends a text at its first NUL byte, whatever follows;
  // the scan reads on, so a NUL's text may be refused for what follows it.)
  DepthCounter counter;
  if (nlohmann::json::sax_parse(text, &counter)) {
    const bool deeper = nests_deeper_than(text);
    if (counter.deepest > kJsonDepthLimit && !deeper) __builtin_trap();
    if (text.find('\0') == std::string::npos && deeper != (counter.deepest > kJsonDepthLimit)) __builtin_trap();
  }
  return 0;
}
