// Command lines of the two programs: every option, with its help text.
#pragma once

#include <string>
#include <variant>

#include "flockbridge/bridge/config.hpp"
#include "flockbridge/bridge/pty_pioneer.hpp"
#include "flockbridge/bridge/pty_uno.hpp"
#include "flockbridge/bridge/settings.hpp"

namespace flockbridge::bridge {

/// Exit status for a bad configuration (sysexits' EX_CONFIG): the unit does
/// not restart the daemon over it (RestartPreventExitStatus).
inline constexpr int kConfigErrorExit = 78;

struct BridgeCommandLine {
  ConfigSources sources;  ///< what SIGHUP reads again
  Config config;          ///< loaded from them
};

/// The configuration a command line asks for (its file, then its options),
/// or the exit code when the program should stop at once: after --help,
/// --version, --print-config, or a bad option or setting, whose message has
/// been printed.
/// `family_defaults` gives each robot family's defaults (ConfigSources).
[[nodiscard]] std::variant<BridgeCommandLine, int> parse_bridge_command_line(
    int argc, const char* const* argv,
    std::function<protocol::Result<Config>(const std::string&)> family_defaults = {});

struct SimulatorOptions {
  std::string robot = "flockbot";  ///< flockbot or pioneer
  std::string link;
  PtyUnoSettings uno;
  PtyPioneerSettings pioneer;
  // Random faults: mean seconds between them (exponentially distributed), 0: none.
  double reboot_every_s = 0;
  double silence_every_s = 0;
  std::chrono::milliseconds silence_for{1500};
  double unplug_every_s = 0;
  std::chrono::milliseconds unplug_for{1000};
  bool timestamps = false;  ///< prefix each event line with the monotonic clock, in seconds
};

[[nodiscard]] std::variant<SimulatorOptions, int> parse_simulator_command_line(int argc, const char* const* argv);

}  // namespace flockbridge::bridge
