// The SMR's wheels: what an encoder position and a speed unit are in
// metres, and the pose a robot's encoders add up to.
//
// Conditions of the problem: the motor modules count 2000 positions a wheel
// turn (seed 000) in a 16-bit counter that wraps; the right motor is
// mounted mirrored, so its encoder counts down and its speed is negated
// when the robot drives forward (struct smr's reverse_right); a speed
// command is taken here as encoder positions per 10 ms period. DTU
// publishes no wheel size or wheel base that we could find: the defaults
// below are an assumption (docs/smr.md), to be measured on the robot.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "flockbridge/protocol/robot_model.hpp"

namespace flockbridge::protocol::smr {

struct Geometry {
  double wheel_diameter_m = 0.065;
  double wheel_base_m = 0.26;
  unsigned positions_per_turn = 2000;
  double period_s = 0.010;  ///< a speed unit is positions per period

  /// Metres a wheel travels per encoder position.
  [[nodiscard]] double metres_per_position() const noexcept;
  /// The speed command for a wheel speed in m/s (rounded, not clamped).
  [[nodiscard]] double speed_units(double metres_per_second) const noexcept;
  /// A speed command's wheel speed in m/s.
  [[nodiscard]] double wheel_speed(int speed_units) const noexcept;
};

/// The pose and speeds a robot's encoders add up to, from where it was
/// first read (x forward, y to the left, heading counter-clockwise).
struct Pose {
  double x_m = 0;
  double y_m = 0;
  double heading_rad = 0;
  double v_m_s = 0;    ///< forward speed, over the last few updates
  double w_rad_s = 0;  ///< turn rate, over the last few updates
};

class Odometry {
 public:
  /// Speeds are averaged over the last `window` updates: one period's
  /// encoder step is a few dozen positions, too coarse (and too dependent on
  /// when each module was read) for a speed on its own.
  explicit Odometry(Geometry geometry, std::size_t window = 10)
      : geometry_(geometry), wheels_(geometry.wheel_base_m, window) {}
  /// Adds one reading of both encoders (as the modules count them), taken
  /// `seconds` after the one before.
  const Pose& update(std::uint16_t left, std::uint16_t right, double seconds);
  void reset() noexcept;
  [[nodiscard]] const Pose& pose() const noexcept { return pose_; }

 private:
  Geometry geometry_;
  WheelOdometry wheels_;  ///< in metres
  Pose pose_;
  std::optional<std::uint16_t> left_;
  std::optional<std::uint16_t> right_;
};

}  // namespace flockbridge::protocol::smr
