// The daemon's command line: every option, with its help text.
#pragma once

#include <functional>
#include <string>
#include <variant>

#include "flockbridge/bridge/config.hpp"
#include "flockbridge/bridge/settings.hpp"

namespace flockbridge::bridge {

/// Exit status for a bad configuration (sysexits' EX_CONFIG), the same as
/// for a bad option (kCommandLineErrorExit): the unit does not restart the
/// daemon over it (RestartPreventExitStatus).
inline constexpr int kConfigErrorExit = 78;

struct BridgeCommandLine {
  ConfigSources sources;  ///< what SIGHUP reads again
  Config config;          ///< loaded from them
};

/// The configuration a command line asks for (its file, then its options),
/// or the exit code when the program should stop at once: after --help,
/// --version, --print-config, or a bad option or setting, whose message has
/// been printed.
/// `settings` is every setting, the core's and each family's (families.hpp);
/// `family_list`, what --list-families prints (no such option when empty).
[[nodiscard]] std::variant<BridgeCommandLine, int> parse_bridge_command_line(int argc, const char* const* argv,
                                                                             const SettingsTable& settings,
                                                                             std::string_view family_list = {});

}  // namespace flockbridge::bridge
