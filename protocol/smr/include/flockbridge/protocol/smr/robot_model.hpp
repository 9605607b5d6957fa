// The SMR as the common robot model sees it (robot_model.hpp): its geometry
// and its IR sensors' distances.
//
// Conditions of the problem: the IR module reports six 8-bit values that
// rise as an obstacle comes nearer (smr.h: 0 the left side, 1-3 the front,
// 4 the right side, 5 the rear). Their distance law is the robot's and its
// calibration's, not the bus's: an inverse law mm = k / (value - offset), set
// in the configuration and empty until then. Where the sensors sit, and the
// robot's size, are not published either: the values below are the
// simulated robot's, to be measured on a real one like the wheels.
#pragma once

#include <array>
#include <cstdint>

#include "flockbridge/protocol/robot_model.hpp"
#include "flockbridge/protocol/smr/bus.hpp"
#include "flockbridge/protocol/smr/odometry.hpp"

namespace flockbridge::protocol::smr {

/// One IR sensor's place on the robot.
struct IrMount {
  const char* name;
  double deg;
  double x_mm;
  double y_mm;
};

/// The IR sensors in the module's order.
inline constexpr std::array<IrMount, kIrCount> kIrMounts{{{"left", 90, 0, 100},
                                                          {"front_left", 30, 87, 50},
                                                          {"front", 0, 100, 0},
                                                          {"front_right", -30, 87, -50},
                                                          {"right", -90, 0, -100},
                                                          {"rear", 180, -100, 0}}};
inline constexpr double kRadiusMm = 200;  ///< the circle that holds the robot

/// The project's simulated SMR (sim/smr): what its IR values mean. The
/// simulator plays this law and `--simulate` reads its robot with it.
inline constexpr InverseRange kSimulatedIrRange{.k = 26'000, .offset = -12, .max_mm = 800};

/// The common robot model's geometry: the wheels' (odometry's) geometry,
/// the IR sensors, no bumpers (the SMR has none).
[[nodiscard]] RobotGeometry robot_geometry(const Geometry& wheels, const InverseRange& ir);

}  // namespace flockbridge::protocol::smr
