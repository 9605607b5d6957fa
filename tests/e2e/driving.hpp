// Every path a program can drive a robot through, for every family: how a
// program on a test network's laptop connects through it and sets the robot
// moving. The network tests (network_test.cpp) and the benchmark of what a
// vanished network costs (tests/bench/network_bench.cpp) both go through
// all of them.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "e2e/rig.hpp"
#include "support/test_network.hpp"

namespace flockbridge::testing {

/// The same motion on every family's common model.
const nlohmann::json& common_drive();

/// A driving program on the laptop, kept alive for as long as it is held.
using Driver = std::shared_ptr<void>;

struct DrivingPath {
  std::string name;
  /// What the bridge needs for this path (the live view is off by default).
  std::vector<std::string> bridge_args;
  /// Connects from the laptop and sets the robot moving; a family without
  /// a program of its own for its own port fails the test loudly.
  std::function<Driver(Rig&, TestNetwork&, const std::string& family)> drive;
  /// The family's own port: only a family that has one (its description's
  /// native_port) is driven through it.
  bool own_port = false;

  /// Whether `family` can be driven this way.
  [[nodiscard]] bool serves(const std::string& family) const;
};

/// The family's own port, the JSON port, the dashboard's WebSocket, the Foxglove live view.
const std::vector<DrivingPath>& driving_paths();

/// Every family with a robot, from the daemon's own table of families (what
/// flockbridge --list-families prints).
std::vector<std::string> robot_families();

/// A rig whose bridge runs on `network`'s robot computer.
RigOptions rig_on(TestNetwork& network, const std::string& family, const std::vector<std::string>& bridge_args);

}  // namespace flockbridge::testing
