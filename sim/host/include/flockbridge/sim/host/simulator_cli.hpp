// The simulator program's command line: every option, with its help text.
#pragma once

#include <chrono>
#include <string>
#include <variant>

#include "flockbridge/sim/host/pty_robot.hpp"
#include "flockbridge/sim/host/pty_uno.hpp"

namespace flockbridge::sim {

struct SimulatorSettings {
  std::string robot = "flockbot";  ///< flockbot, pioneer or smr
  std::string link;
  PtyUnoSettings uno;
  PtyPioneerSettings pioneer;
  PtySmrSettings smr;
  // Random faults: mean seconds between them (exponentially distributed), 0: none.
  double reboot_every_s = 0;
  double silence_every_s = 0;
  std::chrono::milliseconds silence_for{1500};
  double unplug_every_s = 0;
  std::chrono::milliseconds unplug_for{1000};
  bool timestamps = false;  ///< prefix each event line with the monotonic clock, in seconds
};

[[nodiscard]] std::variant<SimulatorSettings, int> parse_simulator_command_line(int argc, const char* const* argv);

}  // namespace flockbridge::sim
