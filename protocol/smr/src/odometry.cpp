#include "flockbridge/protocol/smr/odometry.hpp"

#include <cmath>
#include <numbers>

namespace flockbridge::protocol::smr {

double Geometry::metres_per_position() const noexcept {
  return std::numbers::pi * wheel_diameter_m / positions_per_turn;
}

double Geometry::speed_units(double metres_per_second) const noexcept {
  return metres_per_second * period_s / metres_per_position();
}

double Geometry::wheel_speed(int speed_units) const noexcept {
  return speed_units * metres_per_position() / period_s;
}

const Pose& Odometry::update(std::uint16_t left, std::uint16_t right, double seconds) {
  if (left_ && right_) {
    // The counters wrap: the step is the shorter way round.
    const auto step = [](std::uint16_t now, std::uint16_t before) {
      return static_cast<std::int16_t>(static_cast<std::uint16_t>(now - before));
    };
    const double metres = geometry_.metres_per_position();
    wheels_.step(step(left, *left_) * metres, -step(right, *right_) * metres, seconds);  // the right mounted mirrored
    pose_ = Pose{wheels_.x(), wheels_.y(), wheels_.heading_rad(), wheels_.speed(), wheels_.turn_rate()};
  }
  left_ = left;
  right_ = right;
  return pose_;
}

void Odometry::reset() noexcept {
  pose_ = Pose{};
  wheels_.reset();
  left_.reset();
  right_.reset();
}

}  // namespace flockbridge::protocol::smr
