// Command lines of the two programs: every option, with its help text.
#pragma once

#include <string>
#include <variant>

#include "flockbridge/bridge/config.hpp"

namespace flockbridge::bridge {

/// The Config a command line asks for, or the exit code when the program
/// should stop at once (after --help, --version or a bad option, whose
/// message has been printed).
[[nodiscard]] std::variant<Config, int> parse_bridge_command_line(int argc, const char* const* argv);

struct SimulatorOptions {
  std::string link;
  sim::UnoModelSettings model;
};

[[nodiscard]] std::variant<SimulatorOptions, int> parse_simulator_command_line(int argc, const char* const* argv);

}  // namespace flockbridge::bridge
