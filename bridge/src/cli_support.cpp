#include "flockbridge/bridge/cli_support.hpp"

namespace flockbridge::bridge {

const char* version_text() noexcept {
  return "flockbridge " FLOCKBRIDGE_VERSION;
}

std::optional<int> parse_or_exit(CLI::App& app, int argc, const char* const* argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error);
  }
  return std::nullopt;
}

}  // namespace flockbridge::bridge
