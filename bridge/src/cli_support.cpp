#include "flockbridge/bridge/cli_support.hpp"

#include <iostream>
#include <vector>

#include "flockbridge/bridge/suggest.hpp"

namespace flockbridge::bridge {

const char* version_text() noexcept {
  return "flockbridge " FLOCKBRIDGE_VERSION;
}

namespace {

/// Names each mistyped option with the one that was likely meant.
void suggest_options(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* option : app.get_options()) {
    for (const std::string& name : option->get_lnames()) names.push_back("--" + name);
  }
  const std::vector<std::string_view> views(names.begin(), names.end());
  for (const std::string& extra : app.remaining()) {
    if (!extra.starts_with("-")) continue;
    const std::string option = extra.substr(0, extra.find('='));
    std::cerr << app.get_name() << ": there is no option " << option;
    if (const auto meant = nearest(option, views)) {
      std::cerr << "; did you mean " << *meant << "?";
    }
    std::cerr << "\n";
  }
}

}  // namespace

std::optional<int> parse_or_exit(CLI::App& app, int argc, const char* const* argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ExtrasError& error) {
    suggest_options(app);
    return app.exit(error);
  } catch (const CLI::ParseError& error) {
    return app.exit(error);
  }
  return std::nullopt;
}

}  // namespace flockbridge::bridge
