// A family's probe talking to its simulated robot, with no line between
// them: what the probe sends goes to `robot` (which returns what the robot
// sent back meanwhile), what comes back goes to the probe, until it finds
// the robot, is refuted, or the conversation runs dry.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>

#include "flockbridge/protocol/serial_probe.hpp"

namespace flockbridge::testing {

struct Conversation {
  std::optional<protocol::ProbeFinding> found;
  bool refuted = false;
  std::size_t exchanges = 0;  ///< messages the probe sent
};

inline Conversation converse(protocol::SerialProbe& probe, std::size_t speed,
                             const std::function<protocol::Bytes(const protocol::Bytes&)>& robot) {
  Conversation result;
  protocol::Bytes to_robot = probe.start(speed);
  for (int round = 0; round < 16; ++round) {
    if (!to_robot.empty()) ++result.exchanges;
    const protocol::Bytes from_robot = robot(to_robot);
    if (from_robot.empty()) break;
    const protocol::ProbeStep step = probe.feed(from_robot);
    if (step.found || step.refuted) {
      result.found = step.found;
      result.refuted = step.refuted;
      break;
    }
    to_robot = step.send;
  }
  return result;
}

}  // namespace flockbridge::testing
