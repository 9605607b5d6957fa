// The simulator program's command line: the options every simulated robot
// has, and each family's own (SimulatedFamily), with their help text.
#pragma once

#include <chrono>
#include <span>
#include <string>
#include <variant>

#include "flockbridge/sim/host/simulated_family.hpp"

namespace flockbridge::sim {

struct SimulatorSettings {
  std::string robot;  ///< the chosen family's name
  SimulatedLine line;
  RobotMaker make_robot;  ///< the chosen family's, reading its options
  // Random faults: mean seconds between them (exponentially distributed), 0: none.
  double reboot_every_s = 0;
  double silence_every_s = 0;
  std::chrono::milliseconds silence_for{1500};
  double unplug_every_s = 0;
  std::chrono::milliseconds unplug_for{1000};
  bool timestamps = false;  ///< prefix each event line with the monotonic clock, in seconds
};

/// Parses the command line for a robot of one of `families` (the first is
/// the default); the exit code when the program should stop at once.
[[nodiscard]] std::variant<SimulatorSettings, int> parse_simulator_command_line(
    int argc, const char* const* argv, std::span<const SimulatedFamily> families);

}  // namespace flockbridge::sim
