#include "flockbridge/bridge/cli_support.hpp"

#include <iostream>
#include <vector>

#include "flockbridge/bridge/suggest.hpp"

namespace flockbridge::bridge {

const char* version_text() noexcept {
  return "flockbridge " FLOCKBRIDGE_VERSION;
}

namespace {

/// Says what is wrong with each word the command line did not take, naming
/// for a mistyped option the one that was likely meant.
void explain_extras(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* option : app.get_options()) {
    for (const std::string& name : option->get_lnames()) names.push_back("--" + name);
  }
  const std::vector<std::string_view> views(names.begin(), names.end());
  for (const std::string& extra : app.remaining()) {
    if (!extra.starts_with("-")) {
      std::cerr << app.get_name() << ": '" << extra << "' is not an option's value here; " << app.get_name()
                << " takes options only\n";
      continue;
    }
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
    return std::nullopt;
  } catch (const CLI::ExtrasError&) {
    explain_extras(app);
  } catch (const CLI::ParseError& error) {
    // --help and --version end parsing as errors whose exit code is 0.
    if (error.get_exit_code() == 0) return app.exit(error);
    std::cerr << app.get_name() << ": " << error.what() << "\n";
  }
  std::cerr << "Run " << app.get_name() << " --help for its options.\n";
  return kCommandLineErrorExit;
}

}  // namespace flockbridge::bridge
