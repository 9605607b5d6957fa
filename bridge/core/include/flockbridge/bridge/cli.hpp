// The daemon's command line: every option, with its help text.
#pragma once

#include <functional>
#include <optional>
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
  /// What was wrong with the configuration, when the caller asked to hear
  /// it rather than stop (`config` is then the built-in one with the options).
  std::optional<protocol::Error> config_error;
};

/// How parse_bridge_command_line treats a configuration it cannot load.
enum class BadConfiguration {
  Stop,    ///< print why and return kConfigErrorExit: the daemon
  Report,  ///< return it in config_error: doctor, which says what is wrong
};

/// The configuration a command line asks for (its file, then its options),
/// or the exit code when the program should stop at once: after --help,
/// --version, --print-config, or a bad option or setting, whose message has
/// been printed.
/// `settings` is every setting, the core's and each family's (families.hpp);
/// `family_list`, what --list-families prints (no such option when empty).
[[nodiscard]] std::variant<BridgeCommandLine, int> parse_bridge_command_line(int argc, const char* const* argv,
                                                                             const SettingsTable& settings,
                                                                             std::string_view family_list = {},
                                                                             BadConfiguration bad = BadConfiguration::Stop,
                                                                             std::string_view program = "flockbridge");

}  // namespace flockbridge::bridge
